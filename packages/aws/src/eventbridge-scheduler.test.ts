import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import { describe, expect, it } from "vitest";
import {
  conflict,
  fakeSchedulerClient as fakeClient,
  schedulerOptions as options,
} from "./eventbridge-fakes";
import { EventBridgeScheduler, toEventBridgeCron } from "./eventbridge-scheduler";

const timer = {
  tenant_id: "acme",
  schedule_id: "sch_a1b2c3d4e5f6g7h8",
  cron: "0 9 * * 1-5",
  timezone: "Europe/Berlin",
  enabled: true,
};

describe("toEventBridgeCron", () => {
  it.each([
    ["0 9 * * *", "cron(0 9 * * ? *)"],
    ["*/15 8-18 * * *", "cron(*/15 8-18 * * ? *)"],
    ["0 9 * * 1-5", "cron(0 9 ? * MON,TUE,WED,THU,FRI *)"],
    ["0 9 * * 6,7", "cron(0 9 ? * SUN,SAT *)"],
    ["0 9 * * */2", "cron(0 9 ? * SUN,TUE,THU,SAT *)"],
    ["30 6 1,15 * *", "cron(30 6 1,15 * ? *)"],
    ["0 0 1 jan *", "cron(0 0 1 JAN ? *)"],
  ])("turns '%s' into %s", async (cron, expected) => {
    expect(await toEventBridgeCron(cron)).toBe(expected);
  });
});

describe("EventBridgeScheduler", () => {
  it("creates a schedule in the group with the time zone, no flexible window, retries, the DLQ and the due time as input", async () => {
    const client = fakeClient();
    await new EventBridgeScheduler(client, options).put(timer);
    expect(client.sent).toHaveLength(1);
    const command = client.sent[0] as CreateScheduleCommand;
    expect(command).toBeInstanceOf(CreateScheduleCommand);
    expect(command.input).toMatchObject({
      Name: "acme.sch_a1b2c3d4e5f6g7h8",
      GroupName: options.groupName,
      ScheduleExpression: "cron(0 9 ? * MON,TUE,WED,THU,FRI *)",
      ScheduleExpressionTimezone: "Europe/Berlin",
      FlexibleTimeWindow: { Mode: "OFF" },
      State: "ENABLED",
      Target: {
        Arn: options.targetArn,
        RoleArn: options.roleArn,
        RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: options.deadLetterArn },
      },
    });
    expect(JSON.parse(command.input.Target!.Input!)).toEqual({
      tenant_id: "acme",
      schedule_id: "sch_a1b2c3d4e5f6g7h8",
      due_at: "<aws.scheduler.scheduled-time>",
    });
  });

  it("updates a schedule that exists, disabled when the schedule is", async () => {
    const client = fakeClient([conflict]);
    await new EventBridgeScheduler(client, options).put({ ...timer, enabled: false });
    expect(client.sent[1]).toBeInstanceOf(UpdateScheduleCommand);
    expect((client.sent[1] as UpdateScheduleCommand).input.State).toBe("DISABLED");
  });

  it("deletes a schedule, and takes a missing one as deleted", async () => {
    const client = fakeClient([
      () => {
        throw new ResourceNotFoundException({ message: "gone", Message: "gone", $metadata: {} });
      },
    ]);
    await new EventBridgeScheduler(client, options).delete("acme", "sch_x");
    expect(client.sent[0]).toBeInstanceOf(DeleteScheduleCommand);
    expect((client.sent[0] as DeleteScheduleCommand).input).toEqual({
      Name: "acme.sch_x",
      GroupName: options.groupName,
    });
  });

  it("refuses a cron EventBridge cannot run before calling it", async () => {
    const client = fakeClient();
    await expect(
      new EventBridgeScheduler(client, options).put({ ...timer, cron: "0 9 1 * MON" }),
    ).rejects.toThrow(/both day-of-month and day-of-week/);
    expect(client.sent).toHaveLength(0);
  });
});
