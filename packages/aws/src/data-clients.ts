/**
 * The AWS SDK clients of the system, built in one place with the settings that
 * local mode needs (measured against dynalite and fauxqs): an explicit SQS
 * endpoint (otherwise the SDK takes the host of the queue URL), path-style S3
 * addressing, and fake credentials of letters and digits only.
 *
 * `createDataClients` builds the two that every invocation uses (DynamoDB, SQS);
 * the Lambda entries build S3 and the rest on first use (`lazy-adapters.ts`),
 * so that a cold start does not load them. `createAwsClients` (clients.ts)
 * builds all three at once, for the local stack and tests.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type AwsClientsOptions, checkLocalCredentials, clientConfig } from "./client-config";

export type { AwsClientsOptions } from "./client-config";

export interface DataClients {
  dynamodb: DynamoDBClient;
  /** The document client over `dynamodb`: JS values in and out. */
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  /** Closes every client's sockets. */
  destroy(): void;
}

/**
 * The DynamoDB and SQS clients. On AWS pass only the region; in local mode
 * pass the emulators' endpoints and credentials.
 */
export function createDataClients(options: AwsClientsOptions): DataClients {
  checkLocalCredentials(options);
  const { endpoints = {} } = options;
  const dynamodb = new DynamoDBClient(clientConfig(options, endpoints.dynamodb));
  const doc = DynamoDBDocumentClient.from(dynamodb, {
    // Items are JSON-compatible: drop `undefined` as JSON does, and refuse class
    // instances (a Date would otherwise become an empty map).
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  const sqs = new SQSClient(clientConfig(options, endpoints.sqs));
  return {
    dynamodb,
    doc,
    sqs,
    destroy() {
      for (const client of [doc, dynamodb, sqs]) client.destroy();
    },
  };
}
