/** @stackvm/aws */

export type { AwsClients, AwsClientsOptions } from "./clients";
export { createAwsClients } from "./clients";
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
export type { Meter, Meterable, MeterSnapshot } from "./metering";
export { meter } from "./metering";
export type { OpenAiLlmOptions } from "./openai-llm";
export { OpenAiLlm, retryAfterSeconds } from "./openai-llm";
export type { Presigner } from "./s3-blobs";
export { S3Blobs } from "./s3-blobs";
export { SqsQueue } from "./sqs-queue";
export { createTableInput, tableDefinition } from "./table-definition";
