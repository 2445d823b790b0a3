/**
 * The scheduler function's logic, shared by the Lambda entry (invoked by
 * EventBridge Scheduler) and the local timer: start the run due at `due_at`,
 * once. EventBridge passes `due_at` as `<aws.scheduler.scheduled-time>`, the
 * time the run was due, so a late or repeated invocation names the same run.
 */
import type { Log, RunOutcome, ScheduleService, Wake } from "@stackvm/core";
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

/** A waiting branch's wake (`EventBridgeWakes`): a one-time schedule beyond 15 minutes. */
export const WakeEvent = z
  .object({
    kind: z.literal("wake"),
    tenant_id: z.string().min(1).max(128),
    task_id: z.string().min(1).max(128),
    branch: z.string().min(1).max(64),
    head: z.string().min(1).max(128).nullable(),
    wait_id: z.string().min(1).max(128),
    at: z.string().min(1).max(64),
  })
  .strict();

export function createScheduleHandler(
  schedules: ScheduleService,
  log: Log,
  /** Enqueues a wake (`sendWake`); none: wake events are refused with a log line. */
  wake?: (wake: Wake) => Promise<void>,
) {
  return async (event: unknown): Promise<RunOutcome | { outcome: "woken" }> => {
    if ((event as { kind?: unknown } | null)?.kind === "wake") {
      const parsed = WakeEvent.safeParse(event);
      if (!parsed.success || !wake) {
        log.error("the scheduler was invoked with a wake it cannot send", {
          ...(parsed.success ? {} : { issues: parsed.error.issues.slice(0, 5) }),
        });
        return { outcome: "skipped", reason: "malformed wake" };
      }
      const { kind: _, ...w } = parsed.data;
      await wake(w);
      log.info("wake sent", {
        tenant_id: w.tenant_id,
        task_id: w.task_id,
        branch: w.branch,
        at: w.at,
      });
      return { outcome: "woken" };
    }
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
