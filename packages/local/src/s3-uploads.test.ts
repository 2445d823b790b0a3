/**
 * The uploads port on the local S3 emulator with the real S3 client (issue 30,
 * finding 7): the worker reads a presigned upload with a ranged GET, so an
 * object PUT again bigger after its size was checked is never read whole; an
 * empty object (no byte 0 to start a range at) reads as empty.
 */
import { createAwsClients, S3Uploads } from "@stackvm/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap } from "./bootstrap";
import { type Emulators, startEmulators } from "./emulators";

const names = { table: "stackvm", queue: "steps", dlq: "steps-dlq", bucket: "blobs" };

describe("S3Uploads on the S3 emulator", () => {
  let emulators: Emulators;
  let clients: ReturnType<typeof createAwsClients>;
  let uploads: S3Uploads;
  beforeAll(async () => {
    emulators = await startEmulators({ dataDir: null });
    clients = createAwsClients(emulators);
    await bootstrap(clients, names);
    uploads = new S3Uploads(clients.s3, names.bucket);
  });
  afterAll(async () => {
    clients?.destroy();
    await emulators?.stop();
  });

  async function put(key: string, body: string) {
    const url = await uploads.presignPut(key, "text/plain", 60);
    const answer = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body,
    });
    expect(answer.status).toBe(200);
  }

  it("reads no more than the limit and one byte, whatever the object's size", async () => {
    await put("k/t1/kb/doc_a/v1", "x".repeat(5_000));
    expect(await uploads.size("k/t1/kb/doc_a/v1")).toBe(5_000);
    expect((await uploads.get("k/t1/kb/doc_a/v1", 1_000))?.byteLength).toBe(1_001);
    expect((await uploads.get("k/t1/kb/doc_a/v1", 10_000))?.byteLength).toBe(5_000);
  });

  it("reads an empty object as empty, and a missing one as null", async () => {
    await put("k/t1/kb/doc_b/v1", "");
    expect((await uploads.get("k/t1/kb/doc_b/v1", 1_000))?.byteLength).toBe(0);
    expect(await uploads.get("k/t1/kb/doc_c/v1", 1_000)).toBeNull();
  });
});
