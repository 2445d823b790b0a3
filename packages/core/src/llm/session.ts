/**
 * `createLlmSession`: the LLM layer of one step over the llm port. What its
 * calls do (budget, retries, records, parsing, repair rounds, traces) is in
 * `session-calls.ts`, loaded by the first call: most steps call no LLM, and a
 * worker's cold start then loads none of it (nor zod's JSON Schema generator).
 * The session's record of calls and its budget check are here, so a step that
 * made no call reads an empty record without loading anything.
 */
import { loadOnce } from "../load-once";
import type { LlmCall } from "../model";
import { checkSessionBudget } from "./session-budget";
import type { LlmSessionDeps } from "./session-deps";
import type { LlmSession } from "./types";

/**
 * A session for one step. `calls` collects a record of every completed call.
 *
 * @example
 * const llm = createLlmSession({ port, config: LlmConfig.parse({ models }), budget: { tokensLeft: 5_000 } });
 * const verdict = await llm.json({ purpose: "jmp_condition", role: "reason", schemaName: "jmp_condition", schema: JmpVerdict, messages });
 * commit.llm_calls = llm.calls;
 */
export function createLlmSession(deps: LlmSessionDeps): LlmSession {
  const calls: LlmCall[] = [];
  // Concurrent first calls share one load; a failed one is tried again by the next call.
  const load = loadOnce(async () =>
    (await import("./session-calls")).createSessionCalls(deps, calls),
  );
  return {
    calls,
    checkBudget: () => checkSessionBudget(deps.budget, calls),
    generate: async (options) => (await load()).generate(options),
    json: async (options) => (await load()).json(options),
  };
}
