import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { createAwsClients, DynamoItemStore, S3Blobs, SqsQueue } from "@stackvm/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap } from "./bootstrap";
import { startEmulators } from "./emulators";

const names = { table: "stackvm", queue: "steps", dlq: "steps-dlq", bucket: "blobs" };

describe("startEmulators", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stackvm-emulators-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Starts, bootstraps, runs `work`, and stops, closing every client. */
  async function session<T>(
    dir: string | null,
    work: (ports: {
      store: DynamoItemStore;
      queue: SqsQueue;
      blobs: S3Blobs;
      receive: () => Promise<string[]>;
    }) => Promise<T>,
  ): Promise<T> {
    const emulators = await startEmulators({ dataDir: dir });
    const clients = createAwsClients(emulators);
    try {
      const { queueUrl } = await bootstrap(clients, names);
      return await work({
        store: new DynamoItemStore(clients.doc, names.table),
        queue: new SqsQueue(clients.sqs, queueUrl),
        blobs: new S3Blobs(clients.s3, names.bucket),
        receive: async () =>
          (
            (
              await clients.sqs.send(
                new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
              )
            ).Messages ?? []
          ).map((m) => m.Body ?? ""),
      });
    } finally {
      clients.destroy();
      await emulators.stop();
    }
  }

  it("keeps items, messages and blobs across a restart on the same data folder", async () => {
    const id = randomUUID();
    const bytes = new TextEncoder().encode(`blob ${id}`);
    const ref = await session(dataDir, async ({ store, queue, blobs }) => {
      await store.put({ pk: `T#local/${id}`, sk: "TASK", status: "running" });
      await queue.send({ v: 1, id }, { groupId: id, deduplicationId: id });
      return blobs.put(`T#local/${id}`, bytes, "text/plain");
    });
    await session(dataDir, async ({ store, blobs, receive }) => {
      expect(await store.get({ pk: `T#local/${id}`, sk: "TASK" })).toMatchObject({
        status: "running",
      });
      expect(await blobs.get(`T#local/${id}`, ref.sha256)).toEqual(bytes);
      expect(await receive()).toEqual([JSON.stringify({ v: 1, id })]);
    });
  });

  it("honours S3's conditional writes, as LanceDB's commits need (If-None-Match, If-Match)", async () => {
    const emulators = await startEmulators({ dataDir: null });
    const clients = createAwsClients(emulators);
    try {
      await clients.s3.send(new CreateBucketCommand({ Bucket: "conditional" }));
      const put = (Body: string, condition: { IfNoneMatch?: string; IfMatch?: string }) =>
        clients.s3
          .send(new PutObjectCommand({ Bucket: "conditional", Key: "k", Body, ...condition }))
          .then(
            (r) => r.ETag ?? "",
            (e: { name: string }) => e.name,
          );
      const etag = await put("one", { IfNoneMatch: "*" });
      expect(etag).toMatch(/^"/);
      expect(await put("again", { IfNoneMatch: "*" })).toBe("PreconditionFailed");
      expect(await put("two", { IfMatch: '"not-it"' })).toBe("PreconditionFailed");
      expect(await put("two", { IfMatch: etag })).toMatch(/^"/);
      const read = await clients.s3.send(new GetObjectCommand({ Bucket: "conditional", Key: "k" }));
      expect(await read.Body?.transformToString()).toBe("two");
    } finally {
      clients.destroy();
      await emulators.stop();
    }
  });

  it("starts empty every time without a data folder", async () => {
    await session(null, ({ store }) => store.put({ pk: "T#local/x", sk: "TASK" }));
    await session(null, async ({ store }) => {
      expect(await store.get({ pk: "T#local/x", sk: "TASK" })).toBeNull();
    });
  });

  it("leaves no server or socket open after stop", async () => {
    const open = () =>
      process.getActiveResourcesInfo().filter((r) => r.startsWith("TCP") || r === "Timeout").length;
    const before = open();
    await session(null, ({ store }) => store.get({ pk: "T#local/x", sk: "TASK" }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(open()).toBeLessThanOrEqual(before);
  });
});
