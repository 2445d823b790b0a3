/**
 * Lambda entry of the scheduler function: EventBridge Scheduler invokes it for
 * each due run of a tenant's schedule with `{ tenant_id, schedule_id, due_at }`;
 * it starts that run's task once (see `ScheduleService.runDue`). A one-time wake
 * schedule invokes it with `{"kind": "wake", ...}`: it enqueues the wake.
 */
import { sendWake } from "@stackvm/core";
import { awsSystem } from "./aws-system";
import { createScheduleHandler } from "./schedule-handler";

const runtime = awsSystem();

// Also the target of the worker's one-time wake schedules (`EventBridgeWakes`).
export const handler = createScheduleHandler(runtime.system.schedules, runtime.log, (wake) =>
  sendWake(runtime.system.step, wake),
);
