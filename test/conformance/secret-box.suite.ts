/**
 * The conformance suite of the `SecretBox` port, run on the local AES box and
 * on the KMS box: what is sealed opens only with the same context (tenant,
 * namespace, purpose and name each bound), the sealed text hides the secret,
 * and a tampered value, a value of another box or plain text never opens.
 */
import type { SecretBox, SecretContext } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

export interface SecretBoxFixture {
  box: SecretBox;
  /** A box of the same kind with another key. */
  other: SecretBox;
  close?(): Promise<void>;
}

const context: SecretContext = {
  purpose: "mcp-header",
  tenant: "t1",
  namespace: "ns",
  name: "srv|authorization",
};

/** A sealed text with one character of its last part changed. */
function tampered(sealed: string): string {
  const at = sealed.length - 3;
  const flipped = sealed[at] === "A" ? "B" : "A";
  return `${sealed.slice(0, at)}${flipped}${sealed.slice(at + 1)}`;
}

export function secretBoxSuite(name: string, make: () => Promise<SecretBoxFixture>): void {
  describe(`SecretBox conformance: ${name}`, () => {
    let fixture: SecretBoxFixture;
    beforeAll(async () => {
      fixture = await make();
    });
    afterAll(async () => {
      await fixture?.close?.();
    });

    it("opens what it sealed for the same context, and the sealed text hides the secret", async () => {
      const sealed = await fixture.box.seal("Bearer abc-123", context);
      expect(sealed).not.toContain("abc-123");
      expect(await fixture.box.open(sealed, { ...context })).toBe("Bearer abc-123");
    });

    it("seals the same secret twice as two different texts, both opening", async () => {
      const [a, b] = [
        await fixture.box.seal("Bearer é ✓", context),
        await fixture.box.seal("Bearer é ✓", context),
      ];
      expect(a).not.toBe(b);
      expect(await fixture.box.open(a, context)).toBe("Bearer é ✓");
      expect(await fixture.box.open(b, context)).toBe("Bearer é ✓");
    });

    it.each<[string, Partial<SecretContext>]>([
      ["another tenant's record", { tenant: "t2" }],
      ["another namespace", { namespace: "other" }],
      ["another server or header", { name: "srv|x-api-key" }],
      ["another purpose", { purpose: "http-header" }],
    ])("refuses a sealed value copied into %s", async (_what, change) => {
      const sealed = await fixture.box.seal("Bearer abc", context);
      await expect(fixture.box.open(sealed, { ...context, ...change })).rejects.toThrow();
    });

    it("binds the URL: a value sealed for one URL opens for it only; one sealed before URLs were bound opens without", async () => {
      const bound = { ...context, url: "https://mcp.example.com/mcp" };
      const sealed = await fixture.box.seal("Bearer abc", bound);
      expect(await fixture.box.open(sealed, bound)).toBe("Bearer abc");
      await expect(
        fixture.box.open(sealed, { ...bound, url: "https://attacker.example/mcp" }),
      ).rejects.toThrow();
      await expect(fixture.box.open(sealed, context)).rejects.toThrow();
      const legacy = await fixture.box.seal("Bearer old", context);
      expect(await fixture.box.open(legacy, context)).toBe("Bearer old");
      await expect(fixture.box.open(legacy, bound)).rejects.toThrow();
    });

    it("refuses a tampered value, another box's value and plain text", async () => {
      const sealed = await fixture.box.seal("Bearer abc", context);
      await expect(fixture.box.open(tampered(sealed), context)).rejects.toThrow();
      await expect(fixture.other.open(sealed, context)).rejects.toThrow();
      await expect(fixture.box.open("plain text", context)).rejects.toThrow(/not a sealed secret/);
    });
  });
}
