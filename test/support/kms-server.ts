/**
 * A KMS-shaped server on loopback for tests: the AWS JSON 1.1 protocol of KMS
 * (`X-Amz-Target: TrentService.*`), with `GenerateDataKey` and `Decrypt` as
 * KMS documents them: a data key's ciphertext names its KMS key and is bound to
 * the encryption context, `Decrypt` with another context answers
 * `InvalidCiphertextException`, and with another `KeyId`,
 * `IncorrectKeyException`. The real SDK client talks to it; every request is
 * kept (`calls`) so that a test can check what reached KMS.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface KmsCall {
  operation: string;
  body: Record<string, unknown>;
  signed: boolean;
}

export interface ScriptedKms {
  endpoint: string;
  calls: KmsCall[];
  close(): Promise<void>;
}

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** The encryption context as bytes, independent of key order. */
const contextBytes = (context: unknown) =>
  Buffer.from(
    JSON.stringify(Object.entries((context ?? {}) as Record<string, string>).sort()),
    "utf8",
  );

/** Starts the server with the given key ids (each gets its own key material). */
export async function startScriptedKms(keyIds: string[]): Promise<ScriptedKms> {
  const keys = new Map(keyIds.map((id) => [id, randomBytes(32)]));
  const calls: KmsCall[] = [];

  const keyOf = (id: unknown) => {
    const key = keys.get(String(id));
    if (!key) throw new KmsError("NotFoundException", `Key '${String(id)}' does not exist`);
    return key;
  };

  const operations: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    GenerateDataKey(body) {
      const key = keyOf(body.KeyId);
      if (body.KeySpec !== "AES_256")
        throw new KmsError("ValidationException", "KeySpec must be AES_256 here");
      const dataKey = randomBytes(32);
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, nonce);
      cipher.setAAD(contextBytes(body.EncryptionContext));
      const sealed = Buffer.concat([cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
      const id = Buffer.from(String(body.KeyId), "utf8");
      const blob = Buffer.concat([Buffer.from([id.length]), id, nonce, sealed]);
      return {
        KeyId: body.KeyId,
        Plaintext: dataKey.toString("base64"),
        CiphertextBlob: blob.toString("base64"),
      };
    },
    Decrypt(body) {
      const blob = Buffer.from(String(body.CiphertextBlob), "base64");
      const id = blob.subarray(1, 1 + (blob[0] ?? 0)).toString("utf8");
      if (body.KeyId !== undefined && body.KeyId !== id)
        throw new KmsError(
          "IncorrectKeyException",
          "The key ID in the request does not identify the key that encrypted the ciphertext",
        );
      const key = keyOf(id);
      const rest = blob.subarray(1 + id.length);
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, rest.subarray(0, 12));
        decipher.setAAD(contextBytes(body.EncryptionContext));
        decipher.setAuthTag(rest.subarray(rest.length - 16));
        const plain = Buffer.concat([decipher.update(rest.subarray(12, -16)), decipher.final()]);
        return {
          KeyId: id,
          Plaintext: plain.toString("base64"),
          EncryptionAlgorithm: "SYMMETRIC_DEFAULT",
        };
      } catch {
        throw new KmsError("InvalidCiphertextException", "");
      }
    },
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const operation = String(req.headers["x-amz-target"] ?? "").replace(/^TrentService\./, "");
      const answer = (status: number, payload: unknown) => {
        res.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
        res.end(JSON.stringify(payload));
      };
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
        const signed = String(req.headers.authorization ?? "").startsWith("AWS4-HMAC-SHA256 ");
        calls.push({ operation, body, signed });
        const run = operations[operation];
        if (!run) throw new KmsError("UnknownOperationException", `${operation} is not scripted`);
        answer(200, run(body));
      } catch (error) {
        const kms =
          error instanceof KmsError ? error : new KmsError("InternalException", String(error));
        answer(400, { __type: kms.type, message: kms.message });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
