/** @stackvm/aws */

export type { AwsClientsOptions } from "./client-config";
export type { AwsClients } from "./clients";
export { createAwsClients } from "./clients";
export type { DataClients } from "./data-clients";
export { createDataClients } from "./data-clients";
export type { DynamoItemStoreOptions } from "./dynamo-item-store";
export { DynamoItemStore } from "./dynamo-item-store";
export type { EventBridgeSchedulerOptions } from "./eventbridge-scheduler";
export {
  EventBridgeScheduler,
  scheduleName,
  schedulerClient,
  toEventBridgeCron,
} from "./eventbridge-scheduler";
export { LambdaSandbox } from "./lambda-sandbox";
export { lazyEventBridgeScheduler, lazyS3Blobs } from "./lazy-adapters";
export { lazyLambdaSandbox, lazyOpenAiLlm } from "./lazy-worker-adapters";
export type { Meter, Meterable, MeterSnapshot } from "./metering";
export { meter } from "./metering";
export { onFirstUse } from "./on-first-use";
export type { OpenAiLlmOptions } from "./openai-llm";
export { OpenAiLlm, retryAfterSeconds } from "./openai-llm";
export type { Presigner } from "./s3-blobs";
export { S3Blobs, s3Client } from "./s3-blobs";
export { SqsQueue } from "./sqs-queue";
export { createTableInput, tableDefinition } from "./table-definition";
