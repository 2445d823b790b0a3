/**
 * The KMS secret box for the Lambda entries: the KMS client is imported by the
 * first seal or open (a call that adds or uses an MCP server's secret header),
 * so that no function's cold start loads it (see lambda.ts).
 */

import type { SecretBox } from "@stackvm/core";
import { lazyPort } from "@stackvm/core";

/** A {@link KmsSecretBox} with `keyId` in `region`, loaded on first use. */
export function lazyKmsSecretBox(region: string, keyId: string): SecretBox {
  return lazyPort<SecretBox>(async () => {
    const { KmsSecretBox, kmsClient } = await import("./kms-secret-box");
    return new KmsSecretBox(kmsClient(region), keyId);
  });
}
