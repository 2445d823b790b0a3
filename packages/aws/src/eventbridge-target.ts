/**
 * What the two EventBridge Scheduler adapters share: the stack's settings
 * (group, role, target function, DLQ), the target every schedule of this stack
 * invokes, and the create call that finds a schedule of the same name already
 * there. `EventBridgeScheduler` (tenants' schedules) and `EventBridgeWakes`
 * (one-time wakes of waiting branches) differ only in the schedule they ask for.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  SchedulerClient,
  type Target,
} from "@aws-sdk/client-scheduler";

export interface EventBridgeSchedulerOptions {
  /** The schedule group of this stage (infra/schedules.ts). */
  groupName: string;
  /** The role EventBridge Scheduler assumes to invoke the target. */
  roleArn: string;
  /** The scheduler function. */
  targetArn: string;
  /** Where invocations go after the last retry; null: nowhere. */
  deadLetterArn: string | null;
  /** Retries of a failed invocation (default 5). */
  maximumRetryAttempts?: number;
  /** How long a run may still be delivered after it was due (default 1 hour). */
  maximumEventAgeSeconds?: number;
}

/** A client for the adapters, with the default credential chain. */
export const schedulerClient = (region: string): SchedulerClient => new SchedulerClient({ region });

/** The scheduler function with `input`, retried, then sent to the DLQ (when there is one). */
export function schedulerTarget(
  options: EventBridgeSchedulerOptions,
  input: unknown,
  maximumEventAgeSeconds: number,
): Target {
  return {
    Arn: options.targetArn,
    RoleArn: options.roleArn,
    Input: JSON.stringify(input),
    RetryPolicy: {
      MaximumRetryAttempts: options.maximumRetryAttempts ?? 5,
      MaximumEventAgeInSeconds: maximumEventAgeSeconds,
    },
    ...(options.deadLetterArn ? { DeadLetterConfig: { Arn: options.deadLetterArn } } : {}),
  };
}

/** Creates the schedule; "exists" when one of that name is in the group already. */
export async function createSchedule(
  client: Pick<SchedulerClient, "send">,
  input: CreateScheduleCommandInput,
): Promise<"created" | "exists"> {
  try {
    await client.send(new CreateScheduleCommand(input));
    return "created";
  } catch (error) {
    if (error instanceof ConflictException) return "exists";
    throw error;
  }
}
