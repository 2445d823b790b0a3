/**
 * Fakes for the sandbox tools' unit tests (not exported from the package): a
 * sandbox port that answers from a script and records what it was sent, and an
 * LLM session that answers `code` calls from a script and records the messages.
 */

import type { LlmSession } from "../llm/types";
import type { LlmCall } from "../model";
import type { LlmMessage } from "../ports/llm";
import type { SandboxPort } from "../ports/sandbox";
import {
  DEFAULT_SANDBOX_LIMITS,
  type SandboxErrorCode,
  type SandboxRequest,
  type SandboxResponse,
  sandboxError,
} from "../sandbox/protocol";

/** A successful answer with the given result. */
export function ok(result: unknown, extra: Partial<SandboxResponse> = {}): SandboxResponse {
  return {
    v: 1,
    result,
    stdout: "",
    stderr: "",
    truncated: false,
    files: [],
    error: null,
    duration_ms: 5,
    limits: DEFAULT_SANDBOX_LIMITS,
    ...extra,
  };
}

/** A failed answer. */
export function failed(
  code: SandboxErrorCode,
  message: string,
  extra: Partial<SandboxResponse> = {},
) {
  return ok(null, { error: sandboxError(code, message), ...extra });
}

/** A sandbox port that answers each request with the next scripted answer. */
export function scriptedSandbox(
  answers: Array<SandboxResponse | ((request: SandboxRequest) => SandboxResponse)>,
) {
  const requests: SandboxRequest[] = [];
  const port: SandboxPort = {
    async run(request) {
      requests.push(request);
      const next = answers.shift();
      if (!next) throw new Error("scripted sandbox: no answer left");
      return typeof next === "function" ? next(request) : next;
    },
  };
  return { port, requests };
}

/** An LLM session whose `json` calls return the scripted answers in order. */
export function scriptedLlm(answers: unknown[]) {
  const conversations: LlmMessage[][] = [];
  const calls: LlmCall[] = [];
  const session: LlmSession = {
    calls,
    checkBudget() {},
    async generate() {
      throw new Error("scripted llm: generate was not expected");
    },
    async json(options) {
      conversations.push(options.messages.map((message) => ({ ...message })));
      const next = answers.shift();
      if (next === undefined) throw new Error("scripted llm: no answer left");
      calls.push({
        purpose: options.purpose,
        model: "scripted",
        input_tokens: 1,
        output_tokens: 1,
        cost_usd: 0,
        latency_ms: 1,
      });
      return options.schema.parse(next);
    },
  };
  return { session, conversations };
}
