/**
 * Every AWS SDK client at once, S3 included: for the local stack and tests.
 * The Lambda entries build only the data clients at start (`data-clients.ts`)
 * and S3 on first use.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import type { AwsClientsOptions } from "./client-config";
import { createDataClients, type DataClients } from "./data-clients";
import { s3Client } from "./s3-blobs";

export interface AwsClients extends DataClients {
  s3: S3Client;
}

/**
 * Every client at once, S3 included.
 *
 * @example
 * const emulators = await startEmulators({ dataDir: ".stackvm" });
 * const clients = createAwsClients(emulators);
 */
export function createAwsClients(options: AwsClientsOptions): AwsClients {
  const data = createDataClients(options);
  const s3 = s3Client(options);
  return {
    ...data,
    s3,
    destroy() {
      data.destroy();
      s3.destroy();
    },
  };
}
