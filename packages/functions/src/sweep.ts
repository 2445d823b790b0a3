/**
 * Lambda entry of the sweep (its own cron): re-enqueues stalled branches and frees
 * the running slots of tasks that ended without their terminal hook.
 */
import { awsSystem } from "./aws-system";
import { createSweepHandler } from "./sweep-handler";

const runtime = awsSystem();

export const handler = createSweepHandler(
  runtime.system.sweep(runtime.config.stalledAfterSeconds * 1000),
);
