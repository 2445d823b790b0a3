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

/** Checksums only where an operation requires one (neither DynamoDB nor SQS does). */
const CHECKSUMS_WHEN_REQUIRED = {
  requestChecksumCalculation: "WHEN_REQUIRED",
  responseChecksumValidation: "WHEN_REQUIRED",
} as const;

/**
 * Takes out the SDK's logger middleware: with no logger configured it still walks
 * every command's input and output (a branch item, on every step) for sensitive
 * fields before handing them to a logger that drops them. The system logs its own
 * lines; SDK errors still reach the caller.
 */
function withoutLogFilter(client: { middlewareStack: { remove(name: string): boolean } }): void {
  client.middlewareStack.remove("loggerMiddleware");
}

/**
 * The DynamoDB and SQS clients. On AWS pass only the region; in local mode
 * pass the emulators' endpoints and credentials.
 */
export function createDataClients(options: AwsClientsOptions): DataClients {
  checkLocalCredentials(options);
  const { endpoints = {} } = options;
  const dynamodb = new DynamoDBClient({
    ...clientConfig(options, endpoints.dynamodb),
    ...CHECKSUMS_WHEN_REQUIRED,
  });
  const doc = DynamoDBDocumentClient.from(dynamodb, {
    // Items are JSON-compatible: drop `undefined` as JSON does, and refuse class
    // instances (a Date would otherwise become an empty map).
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  // No MD5 of every body sent and received: TLS already guards them on AWS.
  const sqs = new SQSClient({
    ...clientConfig(options, endpoints.sqs),
    ...CHECKSUMS_WHEN_REQUIRED,
    md5: false,
  });
  for (const client of [dynamodb, sqs]) withoutLogFilter(client);
  return {
    dynamodb,
    doc,
    sqs,
    destroy() {
      for (const client of [doc, dynamodb, sqs]) client.destroy();
    },
  };
}
