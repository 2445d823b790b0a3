/**
 * A {@link SecretBox} on AWS KMS, by envelope encryption: each seal asks KMS
 * for a fresh data key (`GenerateDataKey`, AES-256) and seals the value with it
 * locally (AES-256-GCM, as the local box does); only the data key's ciphertext
 * is kept, beside the value. Opening asks KMS to decrypt that data key. The key
 * material never leaves KMS, every use is in CloudTrail, and values of any size
 * fit (a header may hold 8 KiB; KMS `Encrypt` takes 4 KiB).
 *
 * The context is the data key's encryption context, field by field (tenant,
 * namespace, purpose, name, and the server's URL when bound): KMS decrypts the data key only for the same
 * context, so one tenant's sealed value copied into another tenant's record, or
 * into another namespace, does not open. The value's own seal binds the same
 * context as additional data.
 *
 * Sealed form: `kms1.{base64url data key ciphertext}.{the local box's sealed form}`.
 */
import {
  DecryptCommand,
  GenerateDataKeyCommand,
  KMSClient,
  type KMSClientConfig,
} from "@aws-sdk/client-kms";
import { AesSecretBox, type SecretBox, type SecretContext } from "@stackvm/core";

const PREFIX = "kms1";

/** The encryption context KMS binds a data key to. */
export function encryptionContext(context: SecretContext): Record<string, string> {
  return {
    "stackvm:purpose": context.purpose,
    "stackvm:tenant": context.tenant,
    "stackvm:namespace": context.namespace,
    "stackvm:name": context.name,
    // Only when bound: data keys made before URLs were bound have no such pair.
    ...(context.url === undefined ? {} : { "stackvm:url": context.url }),
  };
}

export class KmsSecretBox implements SecretBox {
  /** @param keyId the KMS key: its id, ARN, alias name or alias ARN. */
  constructor(
    private readonly client: Pick<KMSClient, "send">,
    private readonly keyId: string,
  ) {}

  async seal(plaintext: string, context: SecretContext): Promise<string> {
    const dataKey = await this.client.send(
      new GenerateDataKeyCommand({
        KeyId: this.keyId,
        KeySpec: "AES_256",
        EncryptionContext: encryptionContext(context),
      }),
    );
    if (!dataKey.Plaintext || !dataKey.CiphertextBlob)
      throw new Error("KMS GenerateDataKey answered without a data key");
    try {
      const sealed = await new AesSecretBox(dataKey.Plaintext).seal(plaintext, context);
      return `${PREFIX}.${Buffer.from(dataKey.CiphertextBlob).toString("base64url")}.${sealed}`;
    } finally {
      dataKey.Plaintext.fill(0);
    }
  }

  async open(sealed: string, context: SecretContext): Promise<string> {
    const [prefix, wrappedKey, ...rest] = sealed.split(".");
    if (prefix !== PREFIX || !wrappedKey || rest.length === 0)
      throw new Error("not a sealed secret");
    const dataKey = await this.client.send(
      new DecryptCommand({
        // Named, so that a data key of another KMS key is refused, not decrypted with it.
        KeyId: this.keyId,
        CiphertextBlob: Buffer.from(wrappedKey, "base64url"),
        EncryptionContext: encryptionContext(context),
      }),
    );
    if (!dataKey.Plaintext) throw new Error("KMS Decrypt answered without a data key");
    try {
      return await new AesSecretBox(dataKey.Plaintext).open(rest.join("."), context);
    } finally {
      dataKey.Plaintext.fill(0);
    }
  }
}

/** The KMS client; `config` adds an endpoint and credentials in tests. */
export function kmsClient(region: string, config: Partial<KMSClientConfig> = {}): KMSClient {
  return new KMSClient({ region, ...config });
}
