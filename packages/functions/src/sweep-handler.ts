/**
 * The periodic sweep (its own cron): finishes or undoes task starts that a crash
 * cut short, re-enqueues branches that are `running` but have not moved for
 * longer than the step timeout, and frees the running slots of tasks that ended,
 * were deleted or never got a branch (then starts the tasks that waited for
 * them). Shared by the Lambda entry and the local timer.
 */
import {
  type Log,
  type Retention,
  type RunningSlots,
  START_REPAIR_AFTER_MS,
  type SweepDeps,
  sweepStalled,
  type TaskService,
  type TaskStore,
} from "@stackvm/core";

export interface SweepHandlerDeps extends SweepDeps {
  /** Where the markers of task starts are (`TaskStore.unfinishedStarts`). */
  store: Pick<TaskStore, "unfinishedStarts">;
  slots: RunningSlots;
  tasks: TaskService;
  log: Log;
  /** A running branch that has not moved for this long is re-enqueued. */
  stalledMs: number;
  /** Deletes the finished tasks past their retention (`service/retention.ts`). */
  retention: Pick<Retention, "sweep">;
}

export function createSweepHandler(deps: SweepHandlerDeps) {
  return async (): Promise<{
    reenqueued: number;
    slots_freed: number;
    starts_repaired: number;
    expired: number;
  }> => {
    const startsRepaired = await repairStarts(deps, START_REPAIR_AFTER_MS);
    const reenqueued = await sweepStalled(deps, deps.stalledMs);
    // A slot is looked at once no start that claimed it can still be under way.
    const slotsFreed = await deps.slots.reap(START_REPAIR_AFTER_MS);
    // Last: the deletions of expired tasks take what time the sweep has left.
    const expired = await deps.retention.sweep();
    if (reenqueued > 0 || slotsFreed > 0 || startsRepaired > 0 || expired.deleted > 0) {
      deps.log.info("sweep", {
        reenqueued,
        slots_freed: slotsFreed,
        starts_repaired: startsRepaired,
        expired: expired.deleted,
      });
    }
    return {
      reenqueued,
      slots_freed: slotsFreed,
      starts_repaired: startsRepaired,
      expired: expired.deleted,
    };
  };
}

/**
 * A local stack that starts again on its data, before it serves a request:
 * nothing else can be starting a task then (the data folder is locked to this
 * process), so every start marker is a start cut short and is repaired at once
 * instead of after `START_REPAIR_AFTER_MS`. Answers how many.
 *
 * @example
 * await recoverStarts(system.sweep(stalledMs)); // then listen
 */
export function recoverStarts(deps: SweepHandlerDeps): Promise<number> {
  return repairStarts(deps, EVERYTHING);
}

/**
 * A local stack that starts again on its data re-enqueues every `running`
 * branch at once instead of after `stalledMs`: what the killed process had in
 * flight comes back by the visibility timeout anyway, and a step lost between
 * its commit and its enqueue is found here. A re-enqueued step that was not lost
 * costs one read: the worker drops it as a duplicate. Safe while serving.
 * Answers how many branches it re-enqueued.
 */
export function resumeRunning(deps: SweepHandlerDeps): Promise<number> {
  return sweepStalled(deps, EVERYTHING);
}

/** A threshold a minute ahead takes everything, even what a clock a little ahead wrote. */
const EVERYTHING = -60_000;

/** Repairs every task start older than `olderThanMs` that did not complete. */
async function repairStarts(deps: SweepHandlerDeps, olderThanMs: number): Promise<number> {
  const before = new Date(deps.clock.now() - olderThanMs).toISOString();
  let repaired = 0;
  for await (const { tenant, taskId } of deps.store.unfinishedStarts(before)) {
    const outcome = await deps.tasks.repairStart(tenant, taskId);
    deps.log.warn("repaired a task start cut short", {
      tenant_id: tenant,
      task_id: taskId,
      outcome,
    });
    repaired++;
  }
  return repaired;
}
