/**
 * The task-end hook of retention (`retention.ts`): apart from it, so that the
 * worker, whose every task end runs it, loads the sweep's code only when a task
 * first ends (the wiring builds `Retention` on first use).
 */
import type { TaskEndHook } from "./lifecycle";
import type { Retention } from "./retention";

/**
 * Runs when a task ends: writes its expiry marker, if any retention applies.
 *
 * @example
 * afterTerminal: [retentionHook(retention)]
 */
export function retentionHook(retention: Pick<Retention, "schedule">): TaskEndHook {
  return async (branch, task) => {
    await retention.schedule(task, branch.config.namespace.retention_days);
  };
}
