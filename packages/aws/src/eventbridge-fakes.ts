/**
 * For the EventBridge Scheduler adapters' tests: the stack's settings as the
 * infra gives them, and a client that records the commands it is sent and
 * answers from a script (a throwing answer is EventBridge refusing).
 */
import { ConflictException } from "@aws-sdk/client-scheduler";
import type { EventBridgeSchedulerOptions } from "./eventbridge-target";

export const schedulerOptions: EventBridgeSchedulerOptions = {
  groupName: "stackvm-ci-schedules",
  roleArn: "arn:aws:iam::123456789012:role/invoke",
  targetArn: "arn:aws:lambda:eu-central-1:123456789012:function:scheduler",
  deadLetterArn: "arn:aws:sqs:eu-central-1:123456789012:schedules-dlq",
};

export function fakeSchedulerClient(answers: Array<() => unknown> = []) {
  const sent: unknown[] = [];
  return {
    sent,
    async send(command: unknown) {
      sent.push(command);
      const next = answers.shift();
      return next ? next() : {};
    },
  };
}

/** EventBridge's answer to a create whose name is taken. */
export const conflict = () => {
  throw new ConflictException({ message: "exists", Message: "exists", $metadata: {} });
};
