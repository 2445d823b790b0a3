/**
 * The conformance suites against the AWS adapters, through the embedded
 * emulators of local mode (dynalite for DynamoDB, fauxqs for SQS and S3),
 * started here on free ports with their data in a temporary folder.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import { createAwsClients, DynamoItemStore, S3Blobs, SqsQueue } from "@stackvm/aws";
import { afterAll } from "vitest";
// By file, not through @stackvm/local's index, which also loads the whole local stack.
import { bootstrap } from "../../packages/local/src/bootstrap";
import { startEmulators } from "../../packages/local/src/emulators";
import { blobsSuite } from "./blobs.suite";
import { itemStoreSuite } from "./item-store.suite";
import { queueSuite } from "./queue.suite";
import { stepStoresSuite } from "./step-stores.suite";

const names = { table: "conformance", queue: "steps", dlq: "steps-dlq", bucket: "conformance" };

let started: ReturnType<typeof start> | undefined;
async function start() {
  const dataDir = await mkdtemp(join(tmpdir(), "stackvm-conformance-"));
  const emulators = await startEmulators({ dataDir });
  const clients = createAwsClients(emulators);
  await bootstrap(clients, names);
  return { dataDir, emulators, clients };
}
/** One emulator pair for the whole file, started by the first suite that needs it. */
const stack = () => {
  started ??= start();
  return started;
};

afterAll(async () => {
  if (started === undefined) return;
  const { dataDir, emulators, clients } = await started;
  clients.destroy();
  await emulators.stop();
  await rm(dataDir, { recursive: true, force: true });
});

itemStoreSuite("DynamoItemStore on dynalite", async () => {
  const { clients } = await stack();
  return { store: new DynamoItemStore(clients.doc, names.table) };
});

stepStoresSuite("DynamoItemStore on dynalite", async () => {
  const { clients } = await stack();
  return new DynamoItemStore(clients.doc, names.table);
});

queueSuite("SqsQueue on fauxqs", async () => {
  const { clients } = await stack();
  // A fresh FIFO queue per test, so that no test sees another's messages.
  const created = await clients.sqs.send(
    new CreateQueueCommand({
      QueueName: `q-${randomUUID()}.fifo`,
      Attributes: { FifoQueue: "true", ContentBasedDeduplication: "false" },
    }),
  );
  const queueUrl = created.QueueUrl!;
  return {
    queue: new SqsQueue(clients.sqs, queueUrl),
    async receive(max) {
      const out = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ["ApproximateReceiveCount"],
        }),
      );
      return (out.Messages ?? []).map((m) => ({
        messageId: m.MessageId!,
        body: m.Body!,
        receiptHandle: m.ReceiptHandle!,
        receiveCount: Number(m.Attributes?.ApproximateReceiveCount),
      }));
    },
    async ack(receiptHandle) {
      await clients.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }),
      );
    },
  };
});

blobsSuite("S3Blobs on fauxqs", async () => {
  const { clients } = await stack();
  return {
    blobs: new S3Blobs(clients.s3, names.bucket),
    async fetch(url) {
      const response = await fetch(url);
      return response.ok ? new Uint8Array(await response.arrayBuffer()) : null;
    },
  };
});
