/**
 * Lambda entry of the sweep (its own cron): re-enqueues stalled branches and frees
 * the running slots of tasks that ended without their terminal hook.
 */
import { systemClock } from "@stackvm/core";
import { awsRuntime } from "./aws-system";
import { createSweepHandler } from "./sweep-handler";

const runtime = awsRuntime();

export const handler = createSweepHandler({
  items: runtime.system.ports.items,
  queue: runtime.system.ports.queue,
  clock: systemClock,
  log: runtime.log,
  slots: runtime.system.slots,
  stalledMs: runtime.config.stalledAfterSeconds * 1000,
});
