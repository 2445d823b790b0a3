/**
 * The sandbox function's core: takes any event, answers a protocol response.
 * It checks the request, caps its limits at the configured ceiling (and at the
 * time the invocation has left), hands it to the engine of its language, and
 * makes sure the answer fits the transport. It never throws for a bad request or
 * a failing program: those are answers.
 */
import {
  type ParsedSandboxRequest,
  resolveSandboxLimits,
  SANDBOX_PROTOCOL_VERSION,
  type SandboxLimits,
  SandboxRequest,
  type SandboxResponse,
  sandboxError,
} from "@stackvm/core/sandbox-protocol";
import type { SandboxConfig } from "./config";
import { findExecutable } from "./host-tools";
import { JavaScriptEngine } from "./javascript/js-engine";
import { failedOutcome, type RunOutcome } from "./outcome";
import { pythonBoundary } from "./python/boundary";
import { PythonEngine } from "./python/python-engine";

/** A structured log line; the entry file passes its logger. */
export type SandboxLog = (
  level: "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

const defaultLog: SandboxLog = (level, message, fields) =>
  console.error(JSON.stringify({ level, message, ...fields }));

/** Lambda answers at most 6 MB; stay clear of it. */
const MAX_RESPONSE_BYTES = 5_500_000;
/** Time kept back from the invocation's remaining time for answering. */
const ANSWER_MARGIN_MS = 1_500;

export interface SandboxRunnerOptions {
  log?: SandboxLog;
  /** Boot Python from a memory snapshot (default true). */
  pythonSnapshot?: boolean;
}

/**
 * Runs sandbox requests. One per process; `close()` ends its workers and children.
 *
 * @example
 * const runner = new SandboxRunner(sandboxConfigFromEnv(process.env));
 * const answer = await runner.handle({ v: 1, language: "python", code: "1 + 1" });
 * answer.result // 2
 */
export class SandboxRunner {
  readonly #config: SandboxConfig;
  readonly #log: SandboxLog;
  readonly #javascript = new JavaScriptEngine();
  readonly #python: PythonEngine;
  /** Why Python is refused, or null when it may run. */
  readonly #pythonRefusal: string | null;

  constructor(config: SandboxConfig, options: SandboxRunnerOptions = {}) {
    this.#config = config;
    this.#log = options.log ?? defaultLog;
    const prlimit = findExecutable("prlimit");
    if (!prlimit) {
      this.#log("warn", "sandbox: prlimit is missing, so Python runs without an OS memory limit", {
        layer: "memory",
      });
    }
    const python = pythonBoundary(config, this.#log);
    this.#pythonRefusal = python.refusal;
    this.#python = new PythonEngine({
      prlimit,
      unshare: python.unshare,
      bubblewrap: python.bubblewrap,
      ...(python.sweep ? { sweep: python.sweep } : {}),
      ...(config.openBridge ? { openBridge: true } : {}),
      snapshot: options.pythonSnapshot,
      warn: (message) => this.#log("warn", `sandbox: ${message}`),
    });
  }

  /**
   * Starts a JavaScript worker and a Python child now (the child unless the
   * configuration's `warmPython` is false), so that the first runs do not wait.
   */
  async warm(): Promise<void> {
    await Promise.all([
      this.#javascript.warm(),
      this.#pythonRefusal || this.#config.warmPython === false
        ? Promise.resolve()
        : this.#python.warm(resolveSandboxLimits({}, this.#config.ceiling).memory_mib),
    ]);
  }

  /**
   * Answers one event. `remainingMs` is the time the invocation has left (Lambda's
   * `context.getRemainingTimeInMillis()`); the run's time limit stays below it.
   */
  async handle(event: unknown, remainingMs?: number): Promise<SandboxResponse> {
    const started = Date.now();
    const parsed = SandboxRequest.safeParse(event);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`);
      return answer(
        failedOutcome(
          sandboxError(
            "invalid_request",
            `the sandbox request is invalid (${problems.join("; ")}); it must be {v: 1, language: "javascript"|"python", code, inputs?, files?, limits?}`,
          ),
        ),
        this.#config.ceiling,
        started,
      );
    }
    const request = parsed.data;
    const limits = this.#limits(request, remainingMs);
    let outcome: RunOutcome;
    try {
      outcome = await this.#run(request, limits);
    } catch (error) {
      this.#log("error", "sandbox: a run failed on the host side", {
        error: error instanceof Error ? error.message : String(error),
      });
      outcome = failedOutcome(
        sandboxError("internal", "the sandbox failed on its side; try again"),
      );
    }
    return answer(outcome, limits, started);
  }

  /** Ends every worker and child process. */
  async close(): Promise<void> {
    await Promise.all([this.#javascript.close(), this.#python.close()]);
  }

  #limits(request: ParsedSandboxRequest, remainingMs: number | undefined): SandboxLimits {
    const limits = resolveSandboxLimits(request.limits, this.#config.ceiling);
    if (remainingMs === undefined) return limits;
    return {
      ...limits,
      time_ms: Math.max(100, Math.min(limits.time_ms, remainingMs - ANSWER_MARGIN_MS)),
    };
  }

  #run(request: ParsedSandboxRequest, limits: SandboxLimits): Promise<RunOutcome> {
    if (request.language === "javascript") return this.#javascript.run(request, limits);
    if (this.#pythonRefusal) {
      return Promise.resolve(failedOutcome(sandboxError("refused", this.#pythonRefusal)));
    }
    return this.#python.run(request, limits);
  }
}

function answer(outcome: RunOutcome, limits: SandboxLimits, started: number): SandboxResponse {
  const response: SandboxResponse = {
    v: SANDBOX_PROTOCOL_VERSION,
    result: outcome.error ? null : outcome.result,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    truncated: outcome.truncated,
    files: outcome.files,
    error: outcome.error,
    duration_ms: Date.now() - started,
    limits,
  };
  // Escaping can make JSON up to six times its text: check the real size.
  if (Buffer.byteLength(JSON.stringify(response)) <= MAX_RESPONSE_BYTES) return response;
  return {
    ...response,
    result: null,
    stdout: outcome.stdout.slice(0, 64 * 1024),
    stderr: outcome.stderr.slice(0, 64 * 1024),
    truncated: true,
    files: [],
    error: sandboxError(
      "output_limit",
      "the answer (result, output and files together) is too large to send back; return and print less, or write fewer files",
    ),
  };
}
