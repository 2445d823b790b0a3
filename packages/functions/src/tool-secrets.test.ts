/**
 * The secret box the AWS entries build from their environment: the stage's KMS
 * key first (reached here through AWS_ENDPOINT_URL_KMS, the SDK's own setting,
 * at a KMS-shaped server on loopback), else the base64 key, else none.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type ScriptedKms, startScriptedKms } from "../../../test/support/kms-server";
import { toolSecretBox } from "./tool-secrets";

const KEY = "arn:aws:kms:eu-central-1:123456789012:key/tool-secrets";
const context = {
  purpose: "mcp-header",
  tenant: "acme",
  namespace: "ns",
  name: "srv|authorization",
};

describe("toolSecretBox", () => {
  let kms: ScriptedKms;
  beforeAll(async () => {
    kms = await startScriptedKms([KEY]);
  });
  afterAll(() => kms.close());
  afterEach(() => vi.unstubAllEnvs());

  it("seals with the KMS key when one is set, even beside a base64 key", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_KMS", kms.endpoint);
    vi.stubEnv("AWS_ACCESS_KEY_ID", "local");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "local");
    const { secrets } = toolSecretBox(
      {
        STACKVM_TOOL_SECRETS_KMS_KEY: KEY,
        STACKVM_TOOL_SECRETS_KEY: randomBytes(32).toString("base64"),
      },
      "eu-central-1",
    );
    kms.calls.length = 0;
    const sealed = await secrets!.seal("Bearer abc", context);
    expect(await secrets!.open(sealed, context)).toBe("Bearer abc");
    expect(sealed.startsWith("kms1.")).toBe(true);
    expect(kms.calls.map((c) => c.operation)).toEqual(["GenerateDataKey", "Decrypt"]);
  });

  it("seals with the base64 key without KMS, and has no box with neither", async () => {
    const { secrets } = toolSecretBox(
      { STACKVM_TOOL_SECRETS_KEY: randomBytes(32).toString("base64") },
      "eu-central-1",
    );
    const sealed = await secrets!.seal("Bearer abc", context);
    expect(sealed.startsWith("v1.")).toBe(true);
    expect(await secrets!.open(sealed, context)).toBe("Bearer abc");
    expect(toolSecretBox({}, "eu-central-1")).toEqual({});
  });
});
