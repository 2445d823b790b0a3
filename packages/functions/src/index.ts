/**
 * @stackvm/functions: the Lambda entry files (`api.ts`, `worker.ts`, `dlq.ts`,
 * `sweep.ts`, `sandbox.ts`, `scheduler.ts`, `knowledge-function.ts`), the system's one
 * assembly they share with the local stack (`system.ts`) and AWS's (`aws-system.ts`).
 */
export type { RuntimeConfig } from "./config";
export { ConfigError, loadConfig } from "./config";
export type { DlqDeps } from "./dlq-handler";
export { createDlqHandler } from "./dlq-handler";
export { embeddingsConfigured, embeddingsPort } from "./embeddings-port";
export type { Knowledge, KnowledgeOptions } from "./knowledge";
export { createKnowledge, knowledgePortOf } from "./knowledge";
export { llmPort } from "./llm-port";
export type { Provider } from "./llm-provider";
export { createScheduleHandler } from "./schedule-handler";
export type { SweepHandlerDeps } from "./sweep-handler";
export { createSweepHandler, recoverStarts, resumeRunning } from "./sweep-handler";
export type { System, SystemOptions, SystemPorts } from "./system";
export { createSystem, systemOptions } from "./system";
export type { WorkerHandler } from "./worker-handler";
export { createWorkerHandler } from "./worker-handler";
