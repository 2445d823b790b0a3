/**
 * The AWS SDK clients of the system (the Lambda client, which only the worker
 * needs, is built there, so that no other bundle carries it), built in one place with the settings that
 * local mode needs (measured against dynalite and fauxqs): an explicit SQS
 * endpoint (otherwise the SDK takes the host of the queue URL), path-style S3
 * addressing, and fake credentials of letters and digits only.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

export interface AwsClientsOptions {
  region: string;
  /** Endpoints of local emulators; each one given turns on the local settings for its client. */
  endpoints?: { dynamodb?: string; sqs?: string; s3?: string };
  /** Static credentials (local mode); on AWS leave them out for the default provider chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface AwsClients {
  dynamodb: DynamoDBClient;
  /** The document client over `dynamodb`: JS values in and out. */
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  s3: S3Client;
  /** Closes every client's sockets. */
  destroy(): void;
}

/**
 * Builds the clients. On AWS pass only the region; in local mode pass the
 * emulators' endpoints and credentials.
 *
 * @example
 * const emulators = await startEmulators({ dataDir: ".stackvm" });
 * const clients = createAwsClients(emulators);
 */
export function createAwsClients(options: AwsClientsOptions): AwsClients {
  const { region, endpoints = {}, credentials } = options;
  if (credentials !== undefined && Object.values(endpoints).some((e) => e !== undefined)) {
    const given: Array<[string, string]> = [
      ["accessKeyId", credentials.accessKeyId],
      ["secretAccessKey", credentials.secretAccessKey],
    ];
    for (const [name, value] of given) {
      // The emulators' signature checks break on other characters (measured).
      if (!/^[A-Za-z0-9]+$/.test(value)) {
        throw new TypeError(
          `local credentials '${name}' must be letters and digits only; use a fake value such as 'local'`,
        );
      }
    }
  }
  // A copy per client: the SDK writes bookkeeping (`$source`) into the object it gets.
  const common = () => ({
    region,
    ...(credentials
      ? {
          credentials: {
            accessKeyId: credentials.accessKeyId,
            secretAccessKey: credentials.secretAccessKey,
          },
        }
      : {}),
  });
  const dynamodb = new DynamoDBClient({ ...common(), ...at(endpoints.dynamodb) });
  const doc = DynamoDBDocumentClient.from(dynamodb, {
    // Items are JSON-compatible: drop `undefined` as JSON does, and refuse class
    // instances (a Date would otherwise become an empty map).
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  const sqs = new SQSClient({ ...common(), ...at(endpoints.sqs) });
  const s3 = new S3Client({
    ...common(),
    ...at(endpoints.s3),
    // Virtual-hosted names (bucket.127.0.0.1) do not resolve locally.
    ...(endpoints.s3 ? { forcePathStyle: true } : {}),
  });
  return {
    dynamodb,
    doc,
    sqs,
    s3,
    destroy() {
      for (const client of [doc, dynamodb, sqs, s3]) client.destroy();
    },
  };
}

function at(endpoint: string | undefined): { endpoint?: string } {
  return endpoint === undefined ? {} : { endpoint };
}
