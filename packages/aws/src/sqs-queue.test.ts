import type { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { SqsQueue } from "./sqs-queue";

function fakeSqs() {
  const calls: Array<{ name: string; input: Record<string, unknown> }> = [];
  const sqs = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      calls.push({ name: command.constructor.name, input: command.input });
      return {};
    },
  };
  return { sqs: sqs as unknown as SQSClient, calls };
}

describe("SqsQueue", () => {
  it("sends JSON with the group and deduplication ids", async () => {
    const { sqs, calls } = fakeSqs();
    await new SqsQueue(sqs, "url").send(
      { v: 1 },
      { groupId: "t/main", deduplicationId: "t/main/c1" },
    );
    expect(calls).toEqual([
      {
        name: "SendMessageCommand",
        input: {
          QueueUrl: "url",
          MessageBody: '{"v":1}',
          MessageGroupId: "t/main",
          MessageDeduplicationId: "t/main/c1",
        },
      },
    ]);
  });

  it.each([
    [0, 1],
    [1.2, 2],
    [30, 30],
    [50_000, 43_200],
  ])("turns retryAfter(%s) into a visibility timeout of %s seconds", async (seconds, timeout) => {
    const { sqs, calls } = fakeSqs();
    await new SqsQueue(sqs, "url").retryAfter("handle", seconds);
    expect(calls[0]).toEqual({
      name: "ChangeMessageVisibilityCommand",
      input: { QueueUrl: "url", ReceiptHandle: "handle", VisibilityTimeout: timeout },
    });
  });

  it("refuses a body over 256 KiB before sending", async () => {
    const { sqs, calls } = fakeSqs();
    const error = await new SqsQueue(sqs, "url")
      .send("x".repeat(256 * 1024), { groupId: "g", deduplicationId: "d" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "too_large" });
    expect(calls).toEqual([]);
  });
});
