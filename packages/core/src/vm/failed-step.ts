/**
 * What a failed step does with its failure, decided here and only here: the
 * failure's class (`classifyFailure` in `errors.ts`) is read once and turned
 * into what follows.
 *
 * - `retry`: the step goes back to the queue, which tries it again (after
 *   `afterSeconds` when the failure asked for it). The LLM calls it made so far
 *   go with the error to the branch's retry record (`vm/retrying.ts`), so that
 *   every call made ends up in a commit.
 * - `commit`: the step records its failure as an `error` commit
 *   (`draftForFailure` in `vm/decide.ts`, a group member's held error in
 *   `vm/group-held.ts`, an evaluation that could not judge in `vm/pending.ts`);
 *   `replan` says whether a plan update may change it.
 *
 * The callers: the step (`vm/step.ts`), a group member (`vm/group-held.ts`), the
 * draft of an error commit (`vm/decide.ts`), the evaluation (`vm/pending.ts`),
 * and the worker's handling of a step that threw (`vm/after-failure.ts`,
 * `vm/retrying.ts`: how long it waits).
 */
import { classifyFailure } from "../errors";
import type { LlmCall } from "../model";

/** The calls a failed step made, kept with its error until `recordRetry` writes them. */
const carried = new WeakMap<object, LlmCall[]>();

/** Hands the calls a step made to the retry record of its failure (`recordRetry`). */
function carryCalls(error: unknown, calls: readonly LlmCall[]): void {
  if (typeof error === "object" && error !== null && calls.length > 0) {
    carried.set(error, [...(carried.get(error) ?? []), ...calls]);
  }
}

/** The calls the failed step handed over with `error` (`failedStep`), for its retry record. */
export function callsCarriedBy(error: unknown): LlmCall[] {
  return typeof error === "object" && error !== null ? (carried.get(error) ?? []) : [];
}

/** What a failed step does. */
export type FailedStep =
  | { does: "retry"; afterSeconds?: number }
  | { does: "commit"; code: string; message: string; replan: boolean };

/**
 * Decides what a failed step does with `error`; a step that goes back to the
 * queue hands `calls` (its LLM calls so far) to the retry record.
 *
 * @example
 * const failed = failedStep(error, session.calls);
 * if (failed.does === "retry") throw error;
 */
export function failedStep(error: unknown, calls: readonly LlmCall[] = []): FailedStep {
  const decision = classifyFailure(error);
  if (decision.action === "retry") {
    carryCalls(error, calls);
    return decision.afterSeconds === undefined
      ? { does: "retry" }
      : { does: "retry", afterSeconds: decision.afterSeconds };
  }
  return {
    does: "commit",
    code: decision.code,
    message: decision.message,
    replan: decision.action === "record",
  };
}
