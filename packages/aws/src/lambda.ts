/**
 * `@stackvm/aws/lambda`: what the Lambda entries import (the worker also
 * imports `@stackvm/aws/lambda-worker`). Unlike the package's
 * index, it reaches the S3, EventBridge Scheduler, OpenAI and Lambda adapters
 * only through dynamic `import()` (lazy-adapters.ts), so that a function's cold
 * start does not load their SDK clients: a static re-export would put them in
 * every bundle's start-up chunk, used or not.
 */
export type { AwsClientsOptions } from "./client-config";
export type { DataClients } from "./data-clients";
export { createDataClients } from "./data-clients";
export { DynamoItemStore } from "./dynamo-item-store";
export { lazyEventBridgeScheduler, lazyEventBridgeWakes, lazyS3Blobs } from "./lazy-adapters";
export { lazyKmsSecretBox } from "./lazy-kms";
export { lazyMcpClient } from "./lazy-mcp";
export { lazyS3Uploads } from "./lazy-uploads";
export { SqsQueue } from "./sqs-queue";
