/**
 * A branch whose step failed in a way worth trying again (the LLM or a tool
 * answered 5xx, timed out, could not be reached) goes back to the queue. So that
 * the user sees why it does not move, the failure path writes what happened on
 * the branch: the last error, the attempt, when the next one comes, and since
 * when it has been failing (`retrying`). The next commit clears it
 * (`vm/step.ts` `moveHead`); a step that succeeds first time writes nothing more.
 *
 * An LLM that cannot be reached is not retried forever: once it has failed for
 * longer than `llmUnreachableMs` (`STACKVM_LLM_UNREACHABLE_SECONDS`), the step
 * records the failure and the branch ends with that cause.
 */
import { isErrorKind, StackVMError } from "../errors";
import type { LlmCall } from "../model";
import type { Clock } from "../ports/clock";
import type { RetryingRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { callsCarriedBy, failedStep } from "./failed-step";
import type { StepRef } from "./message";

/** At most this many carried calls are kept on a retrying branch (about 300 bytes each). */
const MAX_CARRIED_CALLS = 200;

/** The calls made by earlier deliveries of the branch's failing step, for its next commit. */
export function carriedCalls(branch: { retrying?: RetryingRecord | null }): LlmCall[] {
  return branch.retrying?.llm_calls ?? [];
}

/**
 * Error codes that mean the LLM server gave no answer at all (refused, DNS,
 * reset): only these count toward `STACKVM_LLM_UNREACHABLE_SECONDS`. A server
 * that answers slowly (`llm_timeout`) or with a 5xx (`llm_server_error`) is
 * up: its step is tried again by the queue, each call under `LLM_TIMEOUT_MS`.
 */
const UNREACHABLE_CODES = new Set(["llm_unreachable"]);

/** Default bound on how long an unreachable LLM is retried: about a minute. */
export const DEFAULT_LLM_UNREACHABLE_MS = 60_000;

/** How long an LLM that gives no answer is retried (`STACKVM_LLM_UNREACHABLE_SECONDS`). */
export function unreachableBound(deps: { llmUnreachableMs?: number }): number {
  return deps.llmUnreachableMs ?? DEFAULT_LLM_UNREACHABLE_MS;
}

/** Since when the branch's step has been failing (epoch ms): its first recorded failure, else `now`. */
export function failingSince(branch: { retrying?: RetryingRecord | null }, now: number): number {
  return branch.retrying ? Date.parse(branch.retrying.since) : now;
}

export function isLlmUnreachable(error: unknown): boolean {
  return (
    isErrorKind(error, "retryable") && UNREACHABLE_CODES.has((error as StackVMError).code ?? "")
  );
}

/**
 * The delay before the next attempt of a failed step: what the error asked for
 * (`Retry-After`), else 5 s doubling per attempt up to 2 min; an unreachable LLM
 * is tried again no later than when its bound runs out, so that the last attempt
 * comes on time.
 */
export function retryDelaySeconds(
  error: unknown,
  attempt: number,
  elapsedMs: number,
  unreachableMs: number,
): number {
  const failed = failedStep(error);
  const asked = failed.does === "retry" ? failed.afterSeconds : undefined;
  const backoff = asked ?? Math.min(5 * 2 ** Math.max(0, attempt - 1), 120);
  if (!isLlmUnreachable(error)) return backoff;
  return Math.max(1, Math.min(backoff, Math.ceil((unreachableMs - elapsedMs) / 1000)));
}

/**
 * The error that ends a branch whose LLM has not been reached for longer than
 * the bound, or null while it may still be tried. The first attempt counts from
 * its own start, so an LLM that hangs fails within the bound too (its retries
 * inside the step stop there: `giveUpAt` of the LLM session).
 */
export function unreachableFailure(
  /** When the failures began: the first recorded one, else this step's start (epoch ms). */
  since: number,
  error: unknown,
  now: number,
  unreachableMs: number,
): StackVMError | null {
  if (!isLlmUnreachable(error)) return null;
  const elapsed = now - since;
  if (elapsed < unreachableMs) return null;
  const seconds = Math.round(elapsed / 1000);
  return new StackVMError(
    "forbidden",
    "llm_unreachable",
    `the LLM could not be reached for ${seconds} s (the limit is ${Math.round(unreachableMs / 1000)} s, STACKVM_LLM_UNREACHABLE_SECONDS): ${(error as Error).message}. Check that the LLM endpoint named above answers (the server at OPENAI_BASE_URL, or Bedrock in its region with model access), then retry the task.`,
  );
}

/**
 * Writes the retry state on the branch, if its head is still the message's (a
 * step that went on meanwhile is not marked). Only called when a step failed.
 * Answers the record written, or null when the branch moved or is gone.
 */
export async function recordRetry(
  deps: { store: TaskStore; clock: Clock },
  message: StepRef,
  error: unknown,
  attempt: number,
  maxAttempts: number,
  unreachableMs: number,
): Promise<RetryingRecord | null> {
  // Members of a group fail side by side: each writes on its read of the record
  // (`retry_version`), so that no failure's calls are written over by another's.
  for (let round = 0; ; round++) {
    const now = deps.clock.now();
    const branch = await deps.store.getBranch(message.tenant_id, message.task_id, message.branch);
    if (!branch || branch.head !== message.head) return null;
    const since = branch.retrying?.since ?? new Date(now).toISOString();
    const delay = retryDelaySeconds(error, attempt, now - Date.parse(since), unreachableMs);
    const e = error as Partial<StackVMError>;
    const retrying: RetryingRecord = {
      attempt,
      max_attempts: maxAttempts,
      error: {
        code: typeof e?.code === "string" ? e.code : "error",
        message: typeof e?.message === "string" ? e.message : String(error),
      },
      next_attempt_at: new Date(now + delay * 1000).toISOString(),
      since,
    };
    // Bounded, so that a step failing for days keeps a record the store takes; the oldest go.
    const calls = [...(branch.retrying?.llm_calls ?? []), ...callsCarriedBy(error)].slice(
      -MAX_CARRIED_CALLS,
    );
    if (calls.length > 0) retrying.llm_calls = calls;
    const version = branch.retry_version ?? 0;
    try {
      await deps.store.updateBranch(
        message.tenant_id,
        message.task_id,
        message.branch,
        {
          set: [
            [["retrying"], retrying],
            [["retry_version"], version + 1],
          ],
        },
        {
          exists: true,
          equals: { head: message.head, retry_version: version === 0 ? null : version },
        },
      );
      return retrying;
    } catch (failure) {
      if (!isErrorKind(failure, "conflict") || round >= 4) {
        if (isErrorKind(failure, "conflict")) return null;
        throw failure;
      }
    }
  }
}
