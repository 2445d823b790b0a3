/**
 * @stackvm/aws: the adapters of core's ports on AWS, for the local stack and
 * tests. The Lambda entries import `@stackvm/aws/lambda` and
 * `@stackvm/aws/lambda-worker` instead, which reach the rarely used adapters
 * (EventBridge Scheduler, OpenAI, Lambda) only on first use.
 */

export type { AwsClientsOptions } from "./client-config";
export type { AwsClients } from "./clients";
export { createAwsClients } from "./clients";
export type { DynamoItemStoreOptions } from "./dynamo-item-store";
export { DynamoItemStore } from "./dynamo-item-store";
export { KmsSecretBox, kmsClient } from "./kms-secret-box";
export { lambdaKnowledge } from "./knowledge-function";
export type { LanceKnowledgeIndexOptions } from "./lance-index";
export { LanceKnowledgeIndex, lanceEmulatorStorage } from "./lance-index";
export { SdkMcpClient } from "./mcp-client";
export type { Meter, Meterable, MeterSnapshot } from "./metering";
export { meter } from "./metering";
export { OpenAiEmbeddings } from "./openai-embeddings";
export type { Presigner } from "./s3-blobs";
export { S3Blobs } from "./s3-blobs";
export { S3Uploads } from "./s3-uploads";
export { SqsQueue } from "./sqs-queue";
export { createTableInput, tableDefinition } from "./table-definition";
