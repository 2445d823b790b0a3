import { CreateScheduleCommand } from "@aws-sdk/client-scheduler";
import { describe, expect, it } from "vitest";
import { createScheduleHandler } from "../../functions/src/schedule-handler";
import {
  conflict,
  fakeSchedulerClient as fakeClient,
  schedulerOptions as options,
} from "./eventbridge-fakes";
import { atExpression, EventBridgeWakes, wakeScheduleName } from "./eventbridge-wakes";

const wake = {
  tenant_id: "acme",
  task_id: "tsk_a1b2c3d4e5f6g7h8i9j0",
  branch: "main",
  head: "k3j9x0aa-4",
  wait_id: "w0123456789abcdefghijklm",
  at: "2026-12-01T08:20:00.250Z",
};

describe("EventBridgeWakes", () => {
  it("creates a one-time schedule at the due second (UTC), deleted after it fires, carrying the wake", async () => {
    const client = fakeClient();
    await new EventBridgeWakes(client, options).wakeAt(wake);
    const command = client.sent[0] as CreateScheduleCommand;
    expect(command).toBeInstanceOf(CreateScheduleCommand);
    expect(command.input).toMatchObject({
      Name: wakeScheduleName(wake),
      GroupName: options.groupName,
      ScheduleExpression: "at(2026-12-01T08:20:01)",
      ScheduleExpressionTimezone: "UTC",
      ActionAfterCompletion: "DELETE",
      FlexibleTimeWindow: { Mode: "OFF" },
      Target: { Arn: options.targetArn, RoleArn: options.roleArn },
    });
    expect(JSON.parse(command.input.Target!.Input!)).toEqual({ kind: "wake", ...wake });
    expect(wakeScheduleName(wake).length).toBeLessThanOrEqual(64);
    expect(atExpression("2026-12-01T08:20:00Z")).toBe("at(2026-12-01T08:20:00)");
  });

  it("takes a schedule that exists as armed (the same wait armed again)", async () => {
    const client = fakeClient([conflict]);
    await expect(new EventBridgeWakes(client, options).wakeAt(wake)).resolves.toBeUndefined();
    expect(client.sent).toHaveLength(1);
  });
});

describe("the scheduler function's wake events", () => {
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  const schedules = { runDue: async () => ({ outcome: "skipped", reason: "no" }) } as never;

  it("sends the wake of a wake event and refuses a malformed one", async () => {
    const sent: unknown[] = [];
    const handle = createScheduleHandler(schedules, log, async (w) => {
      sent.push(w);
    });
    expect(await handle({ kind: "wake", ...wake })).toEqual({ outcome: "woken" });
    expect(sent).toEqual([wake]);
    expect(await handle({ kind: "wake", ...wake, extra: 1 })).toMatchObject({
      outcome: "skipped",
    });
    expect(await handle({ kind: "wake", tenant_id: "acme" })).toMatchObject({ outcome: "skipped" });
    expect(sent).toHaveLength(1);
  });
});
