/**
 * The knowledge index's conformance suite against LanceDB, both ways it runs: in
 * a local folder, and on S3 through the local S3 emulator (fauxqs), which is how
 * the same adapter runs on AWS with a real bucket.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { createAwsClients, LanceKnowledgeIndex, lanceEmulatorStorage } from "@stackvm/aws";
import { expect, it } from "vitest";
import { startEmulators } from "../../packages/local/src/emulators";
import { knowledgeIndexSuite } from "./knowledge-index.suite";

knowledgeIndexSuite("LanceKnowledgeIndex in a local folder", async () => {
  const dir = await mkdtemp(join(tmpdir(), "stackvm-lance-"));
  return {
    index: new LanceKnowledgeIndex({ root: dir, indexAfterRows: 10_000 }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

knowledgeIndexSuite("LanceKnowledgeIndex on S3 (the local emulator)", async () => {
  const emulators = await startEmulators({ dataDir: null });
  const clients = createAwsClients(emulators);
  await clients.s3.send(new CreateBucketCommand({ Bucket: "knowledge-index" }));
  return {
    index: new LanceKnowledgeIndex({
      root: "s3://knowledge-index/index",
      storageOptions: lanceEmulatorStorage(
        emulators.endpoints.s3,
        emulators.region,
        emulators.credentials,
      ),
    }),
    async close() {
      clients.destroy();
      await emulators.stop();
    },
  };
});

it("keeps every commit of two processes writing one knowledge base on S3, and answers each row once", async () => {
  const emulators = await startEmulators({ dataDir: null });
  const clients = createAwsClients(emulators);
  try {
    await clients.s3.send(new CreateBucketCommand({ Bucket: "two-writers" }));
    // Two instances share nothing but the bucket, as two functions do.
    const open = () =>
      new LanceKnowledgeIndex({
        root: "s3://two-writers/index",
        storageOptions: lanceEmulatorStorage(
          emulators.endpoints.s3,
          emulators.region,
          emulators.credentials,
        ),
      });
    const [a, b] = [open(), open()];
    const row = (doc: string, n: number, text = doc) => ({
      kind: "chunk" as const,
      id: `${doc}-c0`,
      document_id: doc,
      filename: `${doc}.md`,
      position: 0,
      text,
      data: "{}",
      vector: Array.from({ length: 8 }, (_, i) => (i === n % 8 ? 1 : 0)),
    });
    await a.replaceDocument("t", "kb", "d0", [row("d0", 0)]);
    const docs = Array.from({ length: 12 }, (_, n) => `d${n + 1}`);
    await Promise.all([
      ...docs.map((d, n) => (n % 2 ? a : b).replaceDocument("t", "kb", d, [row(d, n)])),
      a.deleteDocument("t", "kb", "d0"),
      // One document replaced by both at once: a redelivered ingest beside the first.
      a.replaceDocument("t", "kb", "d3", [row("d3", 3, "again")]),
      b.replaceDocument("t", "kb", "d3", [row("d3", 3, "again")]),
    ]);
    const rows = await open().get("t", "kb", ["d0-c0", ...docs.map((d) => `${d}-c0`)]);
    expect(rows.map((r) => r.id).sort()).toEqual(docs.map((d) => `${d}-c0`).sort());
    const hits = await open().search("t", {
      knowledgeBases: ["kb"],
      kind: "chunk",
      vector: row("d3", 3).vector,
      topK: 20,
    });
    expect(hits.filter((h) => h.id === "d3-c0")).toHaveLength(1);
  } finally {
    clients.destroy();
    await emulators.stop();
  }
}, 120_000);
