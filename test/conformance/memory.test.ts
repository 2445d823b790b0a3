/** The conformance suites against the in-memory adapters of core. */
import {
  MemoryBlobs,
  MemoryItemStore,
  MemoryKnowledgeIndex,
  MemoryQueue,
} from "@stackvm/core/testing";
import { blobsSuite } from "./blobs.suite";
import { itemStoreSuite } from "./item-store.suite";
import { knowledgeIndexSuite } from "./knowledge-index.suite";
import { queueSuite } from "./queue.suite";
import { stepStoresSuite } from "./step-stores.suite";

itemStoreSuite("MemoryItemStore", async () => ({ store: new MemoryItemStore() }));

stepStoresSuite("MemoryItemStore", async () => new MemoryItemStore());

queueSuite("MemoryQueue", async () => {
  const queue = new MemoryQueue();
  return {
    queue,
    receive: (max) => queue.receive(max),
    ack: (receiptHandle) => queue.delete(receiptHandle),
  };
});

blobsSuite("MemoryBlobs", async () => ({ blobs: new MemoryBlobs() }));

knowledgeIndexSuite("MemoryKnowledgeIndex", async () => ({ index: new MemoryKnowledgeIndex() }));
