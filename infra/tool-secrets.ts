/**
 * The KMS key that seals tool sources' secret headers (an MCP server's
 * `Authorization`): by envelope encryption, each value with a data key that
 * KMS makes and binds to the tenant and the namespace (encryption context), see
 * packages/aws/src/kms-secret-box.ts. The API seals when a server is added and
 * opens to list its tools; the worker only opens, to call them. No other
 * function may use the key.
 */

export const toolSecretsKey = new aws.kms.Key("ToolSecretsKey", {
  description: "StackVM: seals the secret headers of tool sources (MCP servers)",
  enableKeyRotation: true,
  deletionWindowInDays: 30,
});

/** The variable the entry files read (packages/functions/src/tool-secrets.ts). */
export const toolSecretsEnvironment = { STACKVM_TOOL_SECRETS_KMS_KEY: toolSecretsKey.arn };

/** The API's use of the key: seal (a fresh data key) and open. */
export const toolSecretsSealPermissions = [
  { actions: ["kms:GenerateDataKey", "kms:Decrypt"], resources: [toolSecretsKey.arn] },
];

/** The worker's use of the key: open only. */
export const toolSecretsOpenPermissions = [
  { actions: ["kms:Decrypt"], resources: [toolSecretsKey.arn] },
];
