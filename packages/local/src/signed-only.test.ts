import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import { createAwsClients, S3Uploads } from "@stackvm/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap } from "./bootstrap";
import { type Emulators, startEmulators } from "./emulators";

const names = { table: "stackvm", queue: "steps", dlq: "steps-dlq", bucket: "blobs" };

describe("the emulators behind requireSignature", () => {
  let emulators: Emulators;
  let clients: ReturnType<typeof createAwsClients>;
  beforeAll(async () => {
    emulators = await startEmulators({ dataDir: null });
    clients = createAwsClients(emulators);
    await bootstrap(clients, names);
  });
  afterAll(async () => {
    clients.destroy();
    await emulators.stop();
  });

  it("refuses the issue's attack: an unsigned ListTables to dynalite", async () => {
    const answer = await fetch(emulators.endpoints.dynamodb, {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "DynamoDB_20120810.ListTables",
      },
      body: "{}",
    });
    expect(answer.status).toBe(403);
    expect(await answer.text()).toMatch(/not signed/);
  });

  it("refuses unsigned SQS and S3 requests to fauxqs", async () => {
    const sqs = await fetch(emulators.endpoints.sqs, {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "AmazonSQS.ListQueues",
      },
      body: "{}",
    });
    expect(sqs.status).toBe(403);
    const s3 = await fetch(`${emulators.endpoints.s3}/${names.bucket}?list-type=2`);
    expect(s3.status).toBe(403);
  });

  it("refuses a request signed with the right key id and another secret", async () => {
    const forged = createAwsClients({
      ...emulators,
      credentials: { accessKeyId: emulators.credentials.accessKeyId, secretAccessKey: "guessed" },
    });
    try {
      await expect(forged.dynamodb.send(new ListTablesCommand({}))).rejects.toThrow(
        /signature does not match/,
      );
      await expect(forged.sqs.send(new ListQueuesCommand({}))).rejects.toThrow();
    } finally {
      forged.destroy();
    }
  });

  it("answers the stack's own clients", async () => {
    const tables = await clients.dynamodb.send(new ListTablesCommand({}));
    expect(tables.TableNames).toContain(names.table);
    const queues = await clients.sqs.send(new ListQueuesCommand({}));
    expect(queues.QueueUrls?.length).toBeGreaterThan(0);
  });

  it("takes a presigned upload, and refuses it once its signature or body path is changed", async () => {
    const url = await new S3Uploads(clients.s3, names.bucket).presignPut(
      "t/a/doc.txt",
      "text/plain",
      60,
    );
    const put = (target: string) =>
      fetch(target, { method: "PUT", headers: { "content-type": "text/plain" }, body: "hello" });
    expect((await put(url)).status).toBe(200);
    expect((await put(url.replace("doc.txt", "other.txt"))).status).toBe(403);
    const signature = new URL(url).searchParams.get("X-Amz-Signature")!;
    const flipped = signature.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    expect((await put(url.replace(signature, flipped))).status).toBe(403);
  });

  it("refuses a presigned upload that carries an unsigned x-amz-* header (CopyObject from another tenant's key)", async () => {
    // Another tenant's object in the same bucket, by a key the attacker learned.
    await clients.s3.send(
      new PutObjectCommand({ Bucket: names.bucket, Key: "t/b/secret.txt", Body: "b's secret" }),
    );
    const url = await new S3Uploads(clients.s3, names.bucket).presignPut(
      "t/a/mine.txt",
      "text/plain",
      60,
    );
    // The presigned PUT signs the host and the content type only: the copy source is the
    // attacker's own addition, and would turn the upload into a copy of b's object.
    const copy = await fetch(url, {
      method: "PUT",
      headers: {
        "content-type": "text/plain",
        "x-amz-copy-source": `/${names.bucket}/t/b/secret.txt`,
      },
    });
    expect(copy.status).toBe(403);
    expect(await copy.text()).toMatch(/x-amz-copy-source.*not signed/);
    await expect(
      clients.s3.send(new GetObjectCommand({ Bucket: names.bucket, Key: "t/a/mine.txt" })),
    ).rejects.toThrow();
  });
});

describe("emulator credentials", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stackvm-credentials-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("are random, kept per data folder (mode 0600), and the same after a restart", async () => {
    const first = await startEmulators({ dataDir });
    await first.stop();
    const second = await startEmulators({ dataDir });
    await second.stop();
    const other = await startEmulators({ dataDir: null });
    await other.stop();
    expect(second.credentials).toEqual(first.credentials);
    expect(other.credentials.secretAccessKey).not.toBe(first.credentials.secretAccessKey);
    expect(first.credentials.secretAccessKey).toMatch(/^[0-9a-f]{60}$/);
    const mode = (await stat(join(dataDir, "emulator-credentials.json"))).mode & 0o777;
    expect(mode).toBe(0o600);
  });
});
