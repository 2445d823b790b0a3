import { DescribeTableCommand, DescribeTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { type AwsClients, createAwsClients } from "@stackvm/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap } from "./bootstrap";
import { type Emulators, startEmulators } from "./emulators";

describe("bootstrap", () => {
  let emulators: Emulators;
  let clients: AwsClients;
  beforeAll(async () => {
    emulators = await startEmulators({ dataDir: null });
    clients = createAwsClients(emulators);
  });
  afterAll(async () => {
    clients.destroy();
    await emulators.stop();
  });

  it("creates the table with its index, and a second run changes nothing", async () => {
    const names = { table: "stackvm", queue: "steps", dlq: "steps-dlq", bucket: "blobs" };
    const first = await bootstrap(clients, names);
    const second = await bootstrap(clients, names);
    expect(second).toEqual(first);
    expect(first.queueUrl).toMatch(/steps\.fifo$/);
    expect(first.dlqUrl).toMatch(/steps-dlq\.fifo$/);
    const { Table } = await clients.dynamodb.send(
      new DescribeTableCommand({ TableName: "stackvm" }),
    );
    expect(Table?.TableStatus).toBe("ACTIVE");
    expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual(["gsi1"]);
    // dynalite has no UpdateTimeToLive: bootstrap goes on without it (reads filter expired items).
    const ttl = await clients.dynamodb.send(
      new DescribeTimeToLiveCommand({ TableName: "stackvm" }),
    );
    expect(["DISABLED", "ENABLED"]).toContain(ttl.TimeToLiveDescription?.TimeToLiveStatus);
  });

  it("makes a FIFO queue with explicit deduplication and a redrive to the FIFO DLQ", async () => {
    const result = await bootstrap(
      clients,
      { table: "stackvm2", queue: "steps2", dlq: "steps2-dlq", bucket: "blobs2" },
      { visibilityTimeoutSeconds: 45, maxReceiveCount: 3 },
    );
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: result.queueUrl, AttributeNames: ["All"] }),
    );
    expect(Attributes).toMatchObject({
      FifoQueue: "true",
      ContentBasedDeduplication: "false",
      VisibilityTimeout: "45",
    });
    expect(JSON.parse(Attributes!.RedrivePolicy!)).toEqual({
      deadLetterTargetArn: result.dlqArn,
      maxReceiveCount: 3,
    });
    expect(result.dlqArn).toMatch(/steps2-dlq\.fifo$/);
  });

  it("applies changed settings to an existing queue on the next run", async () => {
    const names = { table: "stackvm3", queue: "steps3", dlq: "steps3-dlq", bucket: "blobs3" };
    await bootstrap(clients, names, { visibilityTimeoutSeconds: 30 });
    const { queueUrl } = await bootstrap(clients, names, { visibilityTimeoutSeconds: 90 });
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["VisibilityTimeout"] }),
    );
    expect(Attributes?.VisibilityTimeout).toBe("90");
  });

  it("moves a message received maxReceiveCount times to the DLQ (fauxqs honours the redrive)", async () => {
    const { queueUrl, dlqUrl } = await bootstrap(
      clients,
      { table: "stackvm4", queue: "steps4", dlq: "steps4-dlq", bucket: "blobs4" },
      { maxReceiveCount: 2 },
    );
    await clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: '"poison"',
        MessageGroupId: "g",
        MessageDeduplicationId: "poison",
      }),
    );
    const receive = async (url: string) =>
      (await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 })))
        .Messages ?? [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [message] = await receive(queueUrl);
      expect(message?.Body).toBe('"poison"');
      // Released as a failed Lambda batch would be after its visibility timeout.
      await clients.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: message!.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    }
    expect(await receive(queueUrl)).toEqual([]);
    const [dead] = await receive(dlqUrl);
    expect(dead?.Body).toBe('"poison"');
  });
});
