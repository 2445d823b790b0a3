/**
 * The periodic sweep (its own cron): re-enqueues branches that are `running` but
 * have not moved for longer than the step timeout, and frees the running slots of
 * tasks that ended or were deleted without their terminal hook (then starts the
 * tasks that waited for them). Shared by the Lambda entry and the local timer.
 */
import { type Log, type RunningSlots, type SweepDeps, sweepStalled } from "@stackvm/core";

export interface SweepHandlerDeps extends SweepDeps {
  slots: RunningSlots;
  log: Log;
  /** A running branch that has not moved for this long is re-enqueued. */
  stalledMs: number;
}

export function createSweepHandler(deps: SweepHandlerDeps) {
  return async (): Promise<{ reenqueued: number; slots_freed: number }> => {
    const reenqueued = await sweepStalled(deps, deps.stalledMs);
    // A slot is only looked at once its task could have ended a step timeout ago.
    const slotsFreed = await deps.slots.reap(deps.stalledMs);
    if (reenqueued > 0 || slotsFreed > 0) {
      deps.log.info("sweep", { reenqueued, slots_freed: slotsFreed });
    }
    return { reenqueued, slots_freed: slotsFreed };
  };
}
