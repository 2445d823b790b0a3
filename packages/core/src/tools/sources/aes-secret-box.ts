/**
 * A {@link SecretBox} with AES-256-GCM from node:crypto: a random 96-bit nonce per
 * seal, the context as additional authenticated data. Locally the key is a file in
 * the data folder (`localSecretKey` in @stackvm/local); on AWS it is a secret of
 * the stage, given to the worker and the API only.
 *
 * Sealed form: `v1.{base64url nonce}.{base64url ciphertext+tag}`; the additional
 * data is the context as one text (`secretContextText`).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type SecretBox, type SecretContext, secretContextText } from "../../ports/secrets";

const PREFIX = "v1";

export class AesSecretBox implements SecretBox {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new TypeError("the secret box key must be 32 bytes");
  }

  /** A box with a fresh random key: for tests and stacks that keep nothing. */
  static random(): AesSecretBox {
    return new AesSecretBox(randomBytes(32));
  }

  async seal(plaintext: string, context: SecretContext): Promise<string> {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(Buffer.from(secretContextText(context), "utf8"));
    const body = Buffer.concat([
      cipher.update(plaintext, "utf8"),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${PREFIX}.${nonce.toString("base64url")}.${body.toString("base64url")}`;
  }

  async open(sealed: string, context: SecretContext): Promise<string> {
    const [prefix, nonce, body] = sealed.split(".");
    if (prefix !== PREFIX || !nonce || !body) throw new Error("not a sealed secret");
    const bytes = Buffer.from(body, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(nonce, "base64url"));
    decipher.setAAD(Buffer.from(secretContextText(context), "utf8"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([
      decipher.update(bytes.subarray(0, bytes.length - 16)),
      decipher.final(),
    ]).toString("utf8");
  }
}
