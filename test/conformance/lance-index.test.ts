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
