/**
 * The secret box of tool sources' secret headers on AWS, from the environment:
 * the KMS key of the stage (`STACKVM_TOOL_SECRETS_KMS_KEY`, set by
 * infra/tool-secrets.ts), or else a 32-byte key in base64
 * (`STACKVM_TOOL_SECRETS_KEY`, for a deployment without KMS); neither means
 * secret headers are refused with a message that names both.
 */
import { lazyKmsSecretBox } from "@stackvm/aws/lambda";
import { AesSecretBox, type SecretBox } from "@stackvm/core";

export function toolSecretBox(
  env: Record<string, string | undefined>,
  region: string,
): { secrets?: SecretBox } {
  if (env.STACKVM_TOOL_SECRETS_KMS_KEY)
    return { secrets: lazyKmsSecretBox(region, env.STACKVM_TOOL_SECRETS_KMS_KEY) };
  if (env.STACKVM_TOOL_SECRETS_KEY)
    return { secrets: new AesSecretBox(Buffer.from(env.STACKVM_TOOL_SECRETS_KEY, "base64")) };
  return {};
}
