import { describe, expect, it } from "vitest";
import { AesSecretBox } from "./aes-secret-box";

describe("AesSecretBox", () => {
  it("opens what it sealed for the same context, and the sealed text hides the secret", async () => {
    const box = AesSecretBox.random();
    const sealed = await box.seal("Bearer abc", "mcp-header|t1|ns|srv|authorization");
    expect(sealed).not.toContain("abc");
    expect(await box.open(sealed, "mcp-header|t1|ns|srv|authorization")).toBe("Bearer abc");
  });

  it.each([
    ["another tenant's record", "mcp-header|t2|ns|srv|authorization"],
    ["another server", "mcp-header|t1|ns|other|authorization"],
  ])("refuses a sealed value copied into %s", async (_what, context) => {
    const box = AesSecretBox.random();
    const sealed = await box.seal("Bearer abc", "mcp-header|t1|ns|srv|authorization");
    await expect(box.open(sealed, context)).rejects.toThrow();
  });

  it("refuses a tampered or foreign sealed value", async () => {
    const box = AesSecretBox.random();
    const sealed = await box.seal("Bearer abc", "c");
    const flipped = `${sealed.slice(0, -2)}${sealed.endsWith("A") ? "B" : "A"}${sealed.slice(-1)}`;
    await expect(box.open(flipped, "c")).rejects.toThrow();
    await expect(AesSecretBox.random().open(sealed, "c")).rejects.toThrow();
    await expect(box.open("plain text", "c")).rejects.toThrow(/not a sealed secret/);
  });
});
