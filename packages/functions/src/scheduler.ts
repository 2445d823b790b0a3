/**
 * Lambda entry of the scheduler function: EventBridge Scheduler invokes it for
 * each due run of a tenant's schedule with `{ tenant_id, schedule_id, due_at }`;
 * it starts that run's task once (see `ScheduleService.runDue`).
 */
import { awsRuntime } from "./aws-system";
import { createScheduleHandler } from "./schedule-handler";

const runtime = awsRuntime();

export const handler = createScheduleHandler(runtime.system.schedules, runtime.log);
