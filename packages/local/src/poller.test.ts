import { randomUUID } from "node:crypto";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { type AwsClients, createAwsClients } from "@stackvm/aws";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Emulators, startEmulators } from "./emulators";
import { type Poller, type PollerOptions, startPoller } from "./poller";

describe("startPoller", () => {
  let emulators: Emulators;
  let clients: AwsClients;
  let poller: Poller | undefined;
  beforeAll(async () => {
    emulators = await startEmulators({ dataDir: null });
    clients = createAwsClients(emulators);
  });
  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });
  afterAll(async () => {
    clients.destroy();
    await emulators.stop();
  });

  /** A fresh FIFO queue whose received messages come back after one second. */
  async function queue(): Promise<string> {
    const out = await clients.sqs.send(
      new CreateQueueCommand({
        QueueName: `poller-${randomUUID()}.fifo`,
        Attributes: { FifoQueue: "true", VisibilityTimeout: "1" },
      }),
    );
    return out.QueueUrl!;
  }

  async function send(queueUrl: string, group: string, body: unknown) {
    await clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(body),
        MessageGroupId: group,
        MessageDeduplicationId: randomUUID(),
      }),
    );
  }

  async function remaining(queueUrl: string): Promise<number> {
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return (
      Number(Attributes?.ApproximateNumberOfMessages) +
      Number(Attributes?.ApproximateNumberOfMessagesNotVisible)
    );
  }

  function start(options: Partial<PollerOptions> & Pick<PollerOptions, "queueUrl" | "handler">) {
    poller = startPoller({ sqs: clients.sqs, concurrency: 1, waitTimeSeconds: 1, ...options });
    return poller;
  }

  it("hands real SQS records to the handler and deletes them on success", async () => {
    const queueUrl = await queue();
    await send(queueUrl, "t1/main", { v: 1 });
    const records: SQSRecord[] = [];
    start({
      queueUrl,
      handler: async (event: SQSEvent, context) => {
        expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
        records.push(...event.Records);
      },
    });
    await waitFor(async () => records.length === 1 && (await remaining(queueUrl)) === 0);
    const [record] = records;
    expect(JSON.parse(record!.body)).toEqual({ v: 1 });
    expect(record).toMatchObject({
      eventSource: "aws:sqs",
      eventSourceARN: expect.stringMatching(/^arn:aws:sqs:us-east-1:\d+:poller-.*\.fifo$/),
      awsRegion: "us-east-1",
      attributes: { ApproximateReceiveCount: "1", MessageGroupId: "t1/main" },
    });
    expect(record!.receiptHandle).not.toBe("");
    expect(record!.attributes.MessageDeduplicationId).toBeTruthy();
  });

  it("keeps the records named in batchItemFailures, which come back later", async () => {
    const queueUrl = await queue();
    await send(queueUrl, "a", "fail-once");
    await send(queueUrl, "b", "ok");
    const seen: string[] = [];
    start({
      queueUrl,
      batchSize: 10,
      handler: async (event: SQSEvent) => {
        const failures = [];
        for (const record of event.Records) {
          const body = JSON.parse(record.body) as string;
          seen.push(`${body}#${record.attributes.ApproximateReceiveCount}`);
          if (body === "fail-once" && record.attributes.ApproximateReceiveCount === "1") {
            failures.push({ itemIdentifier: record.messageId });
          }
        }
        return { batchItemFailures: failures };
      },
    });
    await waitFor(async () => seen.includes("fail-once#2") && (await remaining(queueUrl)) === 0);
    expect(seen.filter((s) => s.startsWith("ok"))).toEqual(["ok#1"]);
  });

  it("fails the whole batch when the handler throws, or names a record not in it", async () => {
    const queueUrl = await queue();
    await send(queueUrl, "a", "first");
    const seen: string[] = [];
    const errors: string[] = [];
    start({
      queueUrl,
      onError: (_, during) => errors.push(during),
      handler: async (event: SQSEvent) => {
        const count = event.Records[0]!.attributes.ApproximateReceiveCount;
        seen.push(count);
        if (count === "1") throw new Error("boom");
        if (count === "2") return { batchItemFailures: [{ itemIdentifier: "not-in-batch" }] };
        return undefined;
      },
    });
    await waitFor(async () => seen.length === 3 && (await remaining(queueUrl)) === 0);
    expect(seen).toEqual(["1", "2", "3"]);
    expect(errors).toEqual(["handler"]);
  });

  it("keeps order within each group with several batches in flight", async () => {
    const queueUrl = await queue();
    const groups = ["g1", "g2", "g3"];
    for (let i = 0; i < 4; i++) for (const g of groups) await send(queueUrl, g, { g, i });
    const order = new Map<string, number[]>();
    let inFlight = 0;
    let maxInFlight = 0;
    start({
      queueUrl,
      concurrency: 3,
      batchSize: 1,
      waitTimeSeconds: 0,
      handler: async (event: SQSEvent) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 20));
        for (const record of event.Records) {
          const { g, i } = JSON.parse(record.body) as { g: string; i: number };
          order.set(g, [...(order.get(g) ?? []), i]);
        }
        inFlight -= 1;
      },
    });
    await waitFor(async () => (await remaining(queueUrl)) === 0 && inFlight === 0);
    for (const g of groups) expect(order.get(g)).toEqual([0, 1, 2, 3]);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(maxInFlight).toBeLessThanOrEqual(3);
  });

  it("stops a long poll at once and waits for the batch in flight", async () => {
    const queueUrl = await queue();
    await send(queueUrl, "a", "slow");
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    let finished = false;
    const running = start({
      queueUrl,
      concurrency: 2,
      waitTimeSeconds: 20,
      handler: async () => {
        started = true;
        await released;
        finished = true;
      },
    });
    await waitFor(async () => started);
    let stopped = false;
    const stopping = running.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    expect(await remaining(queueUrl)).toBe(0);
    // Nothing polls any more: a new message stays in the queue.
    await send(queueUrl, "b", "after stop");
    expect(await remaining(queueUrl)).toBe(1);
  });

  it("keeps a message hidden while its handler runs longer than the visibility timeout", async () => {
    // The queue hides a received message for 1 s; the handler takes 3 s.
    const queueUrl = await queue();
    await send(queueUrl, "slow", "once");
    let handled = 0;
    start({
      queueUrl,
      concurrency: 2,
      visibilityTimeoutSeconds: 1,
      handler: async () => {
        handled++;
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      },
    });
    await waitFor(async () => handled > 0 && (await remaining(queueUrl)) === 0);
    expect(handled).toBe(1);
  });

  it.each([
    ["a concurrency of 0", { concurrency: 0 }, /'concurrency'/],
    ["a batch of 11", { batchSize: 11 }, /'batchSize'/],
    ["a wait of 21 seconds", { waitTimeSeconds: 21 }, /'waitTimeSeconds'/],
    ["a visibility of 0 seconds", { visibilityTimeoutSeconds: 0 }, /'visibilityTimeoutSeconds'/],
  ])("refuses %s", (_, options, message) => {
    expect(() =>
      startPoller({
        sqs: clients.sqs,
        queueUrl: "q",
        handler: () => undefined,
        concurrency: 1,
        ...options,
      }),
    ).toThrow(message);
  });
});

/** Polls until the condition holds (the emulator works in real time); fails after 10 s. */
async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("condition not met within 10 s");
}
