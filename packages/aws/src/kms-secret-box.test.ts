/**
 * The KMS secret box with the real KMS client against a KMS-shaped server on
 * loopback (test/support/kms-server.ts): the secret box conformance suite, and
 * what reaches KMS (a data key request bound to the tenant and the namespace,
 * never the secret).
 */
import { InvalidCiphertextException } from "@aws-sdk/client-kms";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretBoxSuite } from "../../../test/conformance/secret-box.suite";
import { type ScriptedKms, startScriptedKms } from "../../../test/support/kms-server";
import { KmsSecretBox, kmsClient } from "./kms-secret-box";

const KEY = "arn:aws:kms:eu-central-1:123456789012:key/1111-tool-secrets";
const OTHER_KEY = "arn:aws:kms:eu-central-1:123456789012:key/2222-other";

const boxOn = (kms: ScriptedKms, keyId: string) =>
  new KmsSecretBox(
    kmsClient("eu-central-1", {
      endpoint: kms.endpoint,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    }),
    keyId,
  );

secretBoxSuite("KmsSecretBox", async () => {
  const kms = await startScriptedKms([KEY, OTHER_KEY]);
  return { box: boxOn(kms, KEY), other: boxOn(kms, OTHER_KEY), close: kms.close };
});

describe("KmsSecretBox", () => {
  let kms: ScriptedKms;
  beforeAll(async () => {
    kms = await startScriptedKms([KEY]);
  });
  afterAll(() => kms.close());

  const context = {
    purpose: "mcp-header",
    tenant: "acme",
    namespace: "support",
    name: "srv|authorization",
  };

  it("asks KMS for a data key bound to tenant and namespace, and sends KMS only that key", async () => {
    kms.calls.length = 0;
    const box = boxOn(kms, KEY);
    const sealed = await box.seal("Bearer s3cr3t-value", context);
    expect(await box.open(sealed, context)).toBe("Bearer s3cr3t-value");
    expect(kms.calls.map((c) => c.operation)).toEqual(["GenerateDataKey", "Decrypt"]);
    for (const call of kms.calls) {
      expect(call.signed).toBe(true);
      expect(call.body.KeyId).toBe(KEY);
      expect(call.body.EncryptionContext).toEqual({
        "stackvm:purpose": "mcp-header",
        "stackvm:tenant": "acme",
        "stackvm:namespace": "support",
        "stackvm:name": "srv|authorization",
      });
      expect(JSON.stringify(call.body)).not.toContain("s3cr3t");
    }
    expect(sealed).toMatch(/^kms1\.[A-Za-z0-9_-]+\.v1\./);
  });

  it("binds the data key to the server's URL when the context has one", async () => {
    kms.calls.length = 0;
    const box = boxOn(kms, KEY);
    const bound = { ...context, url: "https://mcp.example.com/mcp" };
    await box.seal("Bearer abc", bound);
    expect(kms.calls[0]?.body.EncryptionContext).toMatchObject({
      "stackvm:url": "https://mcp.example.com/mcp",
    });
  });

  it("lets KMS refuse another tenant's data key (InvalidCiphertextException)", async () => {
    const box = boxOn(kms, KEY);
    const sealed = await box.seal("Bearer abc", context);
    await expect(box.open(sealed, { ...context, tenant: "intruder" })).rejects.toBeInstanceOf(
      InvalidCiphertextException,
    );
  });

  it("seals a header value of 8 KiB, beyond what KMS Encrypt takes", async () => {
    const box = boxOn(kms, KEY);
    const value = "x".repeat(8192);
    expect(await box.open(await box.seal(value, context), context)).toBe(value);
  });
});
