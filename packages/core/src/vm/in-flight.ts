/**
 * The LLM call in flight, written on the branch while the model thinks, so that
 * `GET /v1/tasks/{id}` shows more than `running`: which call (purpose, model),
 * which attempt, since when, and the pieces of its answer received so far when
 * it streams. One conditional write when an attempt starts, at most one a
 * second while it streams, one when it ends; a step that went on (its head
 * moved) is not written on. The writes go one after another and never fail the
 * step: a watcher's trouble is no reason to stop a call.
 */
import type { CallAttempt, CallWatch } from "../llm/call-watch";
import type { InFlightRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";

/** How often the count of a streamed answer is written, at most. */
const PROGRESS_EVERY_MS = 1_000;

/** A watch of one step's calls that also says when its writes are all done. */
export interface BranchCallWatch extends CallWatch {
  /** Resolves once every write asked so far is done (before the step commits). */
  settled(): Promise<void>;
}

/**
 * @example
 * const watch = watchCalls({ store, now: clock.now }, branch);
 * const session = deps.llm(budget, prefix, giveUpAt, tokens, watch);
 * // ... the step runs ...
 * await watch.settled();
 */
export function watchCalls(
  deps: { store: TaskStore; now: () => number },
  branch: { tenant_id: string; task_id: string; name: string; head: string | null },
): BranchCallWatch {
  let chain: Promise<void> = Promise.resolve();
  let current: InFlightRecord | null = null;
  let lastWrite = 0;

  const write = (value: InFlightRecord | null) => {
    const snapshot = value ? { ...value } : null;
    lastWrite = deps.now();
    chain = chain.then(() =>
      deps.store
        .updateBranch(
          branch.tenant_id,
          branch.task_id,
          branch.name,
          { set: [[["llm_call"], snapshot]] },
          { exists: true, equals: { head: branch.head } },
        )
        .then(
          () => undefined,
          () => undefined,
        ),
    );
  };

  return {
    attempt(attempt: CallAttempt) {
      current = {
        purpose: attempt.purpose,
        model: attempt.model,
        attempt: attempt.attempt,
        started_at: new Date(attempt.startedAt || deps.now()).toISOString(),
        tokens_so_far: null,
      };
      write(current);
    },
    delta() {
      if (!current) return;
      current.tokens_so_far = (current.tokens_so_far ?? 0) + 1;
      // The first piece at once (the model has begun), then at most once a second.
      if (current.tokens_so_far === 1 || deps.now() - lastWrite >= PROGRESS_EVERY_MS) {
        write(current);
      }
    },
    done() {
      if (!current) return;
      current = null;
      write(null);
    },
    settled: () => chain,
  };
}
