/**
 * The scheduler function's logic, shared by the Lambda entry (invoked by
 * EventBridge Scheduler) and the local timer: start the run due at `due_at`,
 * once. EventBridge passes `due_at` as `<aws.scheduler.scheduled-time>`, the
 * time the run was due, so a late or repeated invocation names the same run.
 */
import type { Log, RunOutcome, ScheduleService } from "@stackvm/core";
import * as z from "zod";

/** What a schedule's target sends (see `EventBridgeScheduler`). */
export const ScheduleEvent = z
  .object({
    tenant_id: z.string().min(1).max(64),
    schedule_id: z.string().min(1).max(64),
    due_at: z.string().min(1).max(64),
  })
  .strict();
export type ScheduleEvent = z.infer<typeof ScheduleEvent>;

export function createScheduleHandler(schedules: ScheduleService, log: Log) {
  return async (event: unknown): Promise<RunOutcome> => {
    const parsed = ScheduleEvent.safeParse(event);
    if (!parsed.success) {
      // Retrying cannot fix a malformed target: say so and stop (EventBridge would retry a throw).
      log.error("the scheduler was invoked with a malformed event", {
        issues: parsed.error.issues.slice(0, 5),
      });
      return { outcome: "skipped", reason: "malformed event" };
    }
    return schedules.runDue(parsed.data);
  };
}
