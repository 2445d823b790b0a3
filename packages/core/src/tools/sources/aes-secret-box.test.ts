import { createDecipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { secretBoxSuite } from "../../../../../test/conformance/secret-box.suite";
import { AesSecretBox } from "./aes-secret-box";

secretBoxSuite("AesSecretBox", async () => ({
  box: AesSecretBox.random(),
  other: AesSecretBox.random(),
}));

describe("AesSecretBox", () => {
  it("binds the context as the text local data folders sealed with before contexts had fields", async () => {
    const key = randomBytes(32);
    const sealed = await new AesSecretBox(key).seal("Bearer abc", {
      purpose: "mcp-header",
      tenant: "t1",
      namespace: "ns",
      name: "srv|authorization",
    });
    const [, nonce = "", body = ""] = sealed.split(".");
    const bytes = Buffer.from(body, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64url"));
    decipher.setAAD(Buffer.from("mcp-header|t1|ns|srv|authorization", "utf8"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const plain = Buffer.concat([decipher.update(bytes.subarray(0, -16)), decipher.final()]);
    expect(plain.toString("utf8")).toBe("Bearer abc");
  });
});
