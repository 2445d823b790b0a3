/**
 * The scheduler port on EventBridge Scheduler: one schedule per tenant schedule,
 * in the stack's schedule group, named `{tenant}.{schedule_id}`. Each schedule
 * invokes the scheduler function with `{tenant_id, schedule_id, due_at}`, where
 * `due_at` is `<aws.scheduler.scheduled-time>`: the time the run was due, the same
 * on every retry, which is what makes a run start once (`ScheduleService.runDue`).
 *
 * - The 5-field cron becomes EventBridge's 6-field `cron(...)`: a year field, `?`
 *   in the day field that is not restricted, and days of week as names
 *   (EventBridge counts 1 = Sunday, classic cron 0 = Sunday; names mean the same
 *   to both).
 * - The time zone goes to `ScheduleExpressionTimezone`, so EventBridge handles
 *   daylight-saving changes.
 * - The flexible time window is off: a run fires at its minute.
 * - Failed invocations are retried (`RetryPolicy`), then sent to the DLQ.
 */
import {
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from "@aws-sdk/client-scheduler";
import { parseCron, type SchedulerPort, type ScheduleTimer, ValidationError } from "@stackvm/core";
import {
  createSchedule,
  type EventBridgeSchedulerOptions,
  schedulerTarget,
} from "./eventbridge-target";

export { type EventBridgeSchedulerOptions, schedulerClient } from "./eventbridge-target";

const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/**
 * EventBridge's cron for a checked 5-field expression.
 *
 * @example
 * await toEventBridgeCron("0 9 * * 1-5") // "cron(0 9 ? * MON,TUE,WED,THU,FRI *)"
 * await toEventBridgeCron("*\/15 * * * *") // "cron(*\/15 * * * ? *)"
 */
export async function toEventBridgeCron(expression: string): Promise<string> {
  const fields = await parseCron(expression);
  const byWeekday = fields.dayOfWeek !== "*";
  const dayOfMonth = byWeekday ? "?" : fields.dayOfMonth;
  const dayOfWeek = byWeekday ? fields.daysOfWeek.map((d) => DAY_NAMES[d]).join(",") : "?";
  return `cron(${fields.minute} ${fields.hour} ${dayOfMonth} ${fields.month.toUpperCase()} ${dayOfWeek} *)`;
}

/** The schedule's name in the group: unique per tenant schedule, within EventBridge's 64 characters. */
export const scheduleName = (tenantId: string, scheduleId: string): string =>
  `${tenantId}.${scheduleId}`;

export class EventBridgeScheduler implements SchedulerPort {
  constructor(
    private readonly client: Pick<SchedulerClient, "send">,
    private readonly options: EventBridgeSchedulerOptions,
  ) {}

  /** The request that creates (or replaces) the schedule; exposed for tests. */
  async input(timer: ScheduleTimer): Promise<CreateScheduleCommandInput> {
    const o = this.options;
    return {
      Name: scheduleName(timer.tenant_id, timer.schedule_id),
      GroupName: o.groupName,
      ScheduleExpression: await toEventBridgeCron(timer.cron),
      ScheduleExpressionTimezone: timer.timezone,
      FlexibleTimeWindow: { Mode: "OFF" },
      State: timer.enabled ? "ENABLED" : "DISABLED",
      ActionAfterCompletion: "NONE",
      Description: `StackVM schedule ${timer.schedule_id} of tenant ${timer.tenant_id}`,
      Target: schedulerTarget(
        o,
        {
          tenant_id: timer.tenant_id,
          schedule_id: timer.schedule_id,
          due_at: "<aws.scheduler.scheduled-time>",
        },
        o.maximumEventAgeSeconds ?? 3600,
      ),
    };
  }

  async put(timer: ScheduleTimer): Promise<void> {
    const input = await this.input(timer);
    const created = await createSchedule(this.client, input).catch((e: unknown) => {
      throw translate(e);
    });
    // It exists: UpdateSchedule replaces every setting with these.
    if (created === "exists") {
      await this.client.send(new UpdateScheduleCommand(input)).catch((e: unknown) => {
        throw translate(e);
      });
    }
  }

  async delete(tenantId: string, scheduleId: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteScheduleCommand({
          Name: scheduleName(tenantId, scheduleId),
          GroupName: this.options.groupName,
        }),
      );
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return;
      throw translate(error);
    }
  }
}

/** EventBridge's refusal of a setting becomes a 422 naming it; the rest is rethrown. */
function translate(error: unknown): unknown {
  if (error instanceof ValidationException) {
    return new ValidationError(
      "invalid_schedule",
      `EventBridge Scheduler refused the schedule: ${error.message}`,
    );
  }
  return error;
}
