import { describe, expect, it } from "vitest";
import { loadConfig } from "./config";

const base = {
  STACKVM_TABLE: "t",
  STACKVM_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/steps.fifo",
  STACKVM_BUCKET: "b",
};
const target = {
  STACKVM_SCHEDULER_ROLE_ARN: "arn:aws:iam::123456789012:role/invoke",
  STACKVM_SCHEDULER_FUNCTION_ARN: "arn:aws:lambda:us-east-1:123456789012:function:scheduler",
  STACKVM_SCHEDULE_DLQ_ARN: "arn:aws:sqs:us-east-1:123456789012:schedules-dlq",
};

describe("the schedule groups in the configuration", () => {
  it("gives the worker its wake group, apart from the tenants' schedules", () => {
    const config = loadConfig({ ...base, ...target, STACKVM_WAKE_GROUP: "stackvm-prod-wakes" });
    expect(config.wakes).toEqual({
      group: "stackvm-prod-wakes",
      roleArn: target.STACKVM_SCHEDULER_ROLE_ARN,
      functionArn: target.STACKVM_SCHEDULER_FUNCTION_ARN,
      dlqArn: target.STACKVM_SCHEDULE_DLQ_ARN,
    });
    expect(config.schedules).toBeNull();
  });

  it("has no wakes without the group or without the role (waits then stay on the queue)", () => {
    expect(loadConfig({ ...base, ...target }).wakes).toBeNull();
    expect(loadConfig({ ...base, STACKVM_WAKE_GROUP: "stackvm-prod-wakes" }).wakes).toBeNull();
  });
});
