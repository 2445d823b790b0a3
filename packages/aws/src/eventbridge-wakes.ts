/**
 * The wake port on EventBridge Scheduler (issue 16, waits beyond 15 minutes):
 * one one-time schedule per wait, `at(...)` in UTC, in the stack's schedule
 * group, deleted by EventBridge after it fires (`ActionAfterCompletion: DELETE`).
 * It invokes the scheduler function with `{"kind": "wake", ...Wake}`, which
 * enqueues the wake message (`sendWake`); the step protocol makes a wake
 * delivered twice run the step once.
 *
 * The name is derived from the wait (`wake-{digest}`), so arming the same wait
 * again (a repeated message) finds the schedule and leaves it as it is.
 */

import { createHash } from "node:crypto";
import type { CreateScheduleCommandInput, SchedulerClient } from "@aws-sdk/client-scheduler";
import type { Wake, WakePort } from "@stackvm/core";
import {
  createSchedule,
  type EventBridgeSchedulerOptions,
  schedulerTarget,
} from "./eventbridge-target";

/** The schedule's name: within EventBridge's 64 characters, one per wait. */
export const wakeScheduleName = (wake: Wake): string =>
  `wake-${createHash("sha256")
    .update([wake.tenant_id, wake.task_id, wake.branch, wake.wait_id].join("\u0000"))
    .digest("hex")
    .slice(0, 40)}`;

/** EventBridge's `at()` takes a UTC time to the second, without a zone. */
export const atExpression = (iso: string): string =>
  `at(${new Date(Math.ceil(Date.parse(iso) / 1000) * 1000).toISOString().slice(0, 19)})`;

export class EventBridgeWakes implements WakePort {
  constructor(
    private readonly client: Pick<SchedulerClient, "send">,
    private readonly options: EventBridgeSchedulerOptions,
  ) {}

  /** The request that creates the one-time schedule; exposed for tests. */
  input(wake: Wake): CreateScheduleCommandInput {
    const o = this.options;
    return {
      Name: wakeScheduleName(wake),
      GroupName: o.groupName,
      ScheduleExpression: atExpression(wake.at),
      ScheduleExpressionTimezone: "UTC",
      FlexibleTimeWindow: { Mode: "OFF" },
      State: "ENABLED",
      ActionAfterCompletion: "DELETE",
      Description: `StackVM wake of ${wake.task_id}/${wake.branch}`,
      // A wake is never too old to deliver: the branch waits for it (24 h is the most).
      Target: schedulerTarget(o, { kind: "wake", ...wake }, 86_400),
    };
  }

  async wakeAt(wake: Wake): Promise<void> {
    // "exists": armed before (a repeated message of the step that began the wait); nothing to do.
    await createSchedule(this.client, this.input(wake));
  }
}
