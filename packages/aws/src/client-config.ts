/**
 * The settings every AWS SDK client of the system is built with, in one place
 * for the clients built at start (`clients.ts`) and those built on first use
 * (S3, EventBridge Scheduler, Lambda): the region, and in local mode the
 * emulator's endpoint and fake credentials of letters and digits only.
 */

export interface AwsClientsOptions {
  region: string;
  /** Endpoints of local emulators; each one given turns on the local settings for its client. */
  endpoints?: { dynamodb?: string; sqs?: string; s3?: string };
  /** Static credentials (local mode); on AWS leave them out for the default provider chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Throws when local credentials hold characters the emulators' signature checks break on (measured). */
export function checkLocalCredentials(options: AwsClientsOptions): void {
  const { endpoints = {}, credentials } = options;
  if (credentials === undefined || !Object.values(endpoints).some((e) => e !== undefined)) return;
  const given: Array<[string, string]> = [
    ["accessKeyId", credentials.accessKeyId],
    ["secretAccessKey", credentials.secretAccessKey],
  ];
  for (const [name, value] of given) {
    if (!/^[A-Za-z0-9]+$/.test(value)) {
      throw new TypeError(
        `local credentials '${name}' must be letters and digits only; use a fake value such as 'local'`,
      );
    }
  }
}

/**
 * A client's configuration: region, credentials when given, and `endpoint`
 * when given. A new object per call: the SDK writes bookkeeping (`$source`)
 * into the object it gets.
 */
export function clientConfig(
  options: AwsClientsOptions,
  endpoint: string | undefined,
): {
  region: string;
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
} {
  const { region, credentials } = options;
  return {
    region,
    ...(credentials
      ? {
          credentials: {
            accessKeyId: credentials.accessKeyId,
            secretAccessKey: credentials.secretAccessKey,
          },
        }
      : {}),
    ...(endpoint === undefined ? {} : { endpoint }),
  };
}
