/**
 * The sweep: re-enqueues branches that are `running` but have not moved for longer
 * than the step timeout (a lost message, a crash between commit and enqueue). A
 * re-enqueued step that is not needed costs one read: the worker drops it as a
 * duplicate.
 */
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { Queue } from "../ports/queue";
import type { SweepIndex } from "../store/sweep-index";
import { enqueueNext, sendWake } from "../vm/enqueue";
import { dueAt } from "../vm/wait";

export interface SweepDeps {
  index: SweepIndex;
  queue: Queue;
  clock: Clock;
  log: Log;
}

/** Re-enqueues every branch that has not moved for `stalledMs`; answers how many. */
export async function sweepStalled(deps: SweepDeps, stalledMs: number): Promise<number> {
  const now = deps.clock.now();
  const before = new Date(now - stalledMs).toISOString();
  const attempt = `sweep-${Math.floor(now / 60_000)}`;
  let count = 0;
  for await (const branch of deps.index.listedBefore(before)) {
    // A waiting branch whose wake was lost (a restart of the local scheduler, a
    // failed send) is woken once it is overdue; an early wake would only wait again.
    const due = branch.status === "waiting" && branch.waiting ? dueAt(branch.waiting) : null;
    if (due !== null && due < now - stalledMs && branch.waiting) {
      await sendWake(deps, {
        tenant_id: branch.tenant_id,
        task_id: branch.task_id,
        branch: branch.name,
        head: branch.head,
        wait_id: branch.waiting.id,
        at: new Date(due).toISOString(),
      });
      count++;
      continue;
    }
    // The index is sorted by start time; a branch that moved recently is not stalled.
    if (branch.status !== "running" || branch.updated_at >= before) continue;
    await enqueueNext(deps, branch, branch.head, attempt);
    count++;
    deps.log.warn("re-enqueued a stalled branch", {
      tenant_id: branch.tenant_id,
      task_id: branch.task_id,
      branch: branch.name,
      head: branch.head,
      updated_at: branch.updated_at,
    });
  }
  return count;
}
