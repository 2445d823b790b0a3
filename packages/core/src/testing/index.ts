/**
 * @stackvm/core/testing: the test doubles of core's ports and the systems built
 * from them, for the tests of every package. Nothing here ships in a function:
 * `@stackvm/core` does not reach this folder (the architecture test checks it).
 *
 * @example
 * import { memorySystem, MemoryItemStore } from "@stackvm/core/testing";
 */
export { FakeScheduler, type IntegrateOptions, integrateSystem } from "./integrate-system";
export { MemoryBlobs } from "./memory/memory-blobs";
export { MemoryItemStore } from "./memory/memory-item-store";
export { MemoryKnowledgeIndex } from "./memory/memory-knowledge-index";
export {
  DEDUPLICATION_WINDOW_MS,
  type DrainHandler,
  type DrainResult,
  MemoryQueue,
  type MemoryQueueOptions,
  type QueuedMessage,
} from "./memory/memory-queue";
export { MemoryUploads } from "./memory/memory-uploads";
export { countingStore, FakeLlm, ManualClock, memorySystem } from "./memory-system";
export { startTestServer, type TestServer, trapOutsideConnections } from "./net";
export { failed, ok, scriptedLlm, scriptedSandbox } from "./sandbox-fakes";
export { testToolContext } from "./tool-context";
