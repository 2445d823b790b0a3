import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ApiKeyStore } from "../store/api-key-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { ManualClock } from "../testing/memory-system";
import { ApiKeyService } from "./api-keys";

function setup() {
  const items = new MemoryItemStore();
  return { items, keys: new ApiKeyService(new ApiKeyStore(items), new ManualClock()) };
}

/** The runs of `length` characters that `a` and `b` have in common. */
function sharedRuns(a: string, b: string, length: number): string[] {
  const runs = [];
  for (let i = 0; i + length <= a.length; i++) {
    const run = a.slice(i, i + length);
    if (b.includes(run)) runs.push(run);
  }
  return runs;
}

describe("ApiKeyService", () => {
  it("gives each key an id that shows nothing of its secret", async () => {
    const { keys } = setup();
    for (let i = 0; i < 50; i++) {
      const created = await keys.create("acme", `k${i}`);
      const secret = created.key.slice("svm_acme_".length);
      expect(sharedRuns(created.key_id.slice("key_".length), secret, 4)).toEqual([]);
      expect(created.key_id).toMatch(/^key_[a-z0-9]{16}$/);
    }
  });

  it("gives an operator's key an id that is not a piece of its hash", async () => {
    const { keys } = setup();
    const key = "operator-chosen-bootstrap-key";
    const created = await keys.create("acme", "bootstrap", key);
    const hash = createHash("sha256").update(key).digest("hex");
    expect(sharedRuns(created.key_id.slice("key_".length), hash, 6)).toEqual([]);
    await expect(keys.verify(key)).resolves.toEqual({ tenantId: "acme", keyId: created.key_id });
  });

  it("verifies a key to its tenant and id until it is revoked", async () => {
    const { keys } = setup();
    const created = await keys.create("acme", "ci");
    await expect(keys.verify(created.key)).resolves.toEqual({
      tenantId: "acme",
      keyId: created.key_id,
    });
    await keys.revoke("acme", created.key_id);
    await expect(keys.verify(created.key)).rejects.toThrow(
      expect.objectContaining({ kind: "unauthorized" }),
    );
    expect(await keys.list("acme")).toEqual([]);
  });

  it.each([
    ["a key of another tenant's form", "svm_other_0123456789abcdefghij0123456789abcdefghij"],
    ["a malformed key", "svm_acme_short"],
    ["a key never made", "svm_acme_0123456789abcdefghij0123456789abcdefghij"],
  ])("refuses %s", async (_, key) => {
    const { keys } = setup();
    await keys.create("acme", "ci");
    await expect(keys.verify(key)).rejects.toThrow(
      expect.objectContaining({ kind: "unauthorized" }),
    );
  });

  it("keeps one key, with its id, when the same key is given again (the bootstrap key at each start)", async () => {
    const { keys } = setup();
    const first = await keys.create("local", "generated at start");
    const again = await keys.create("local", "bootstrap", first.key);
    expect(again.key_id).toBe(first.key_id);
    expect((await keys.list("local")).map((k) => k.key_id)).toEqual([first.key_id]);
    await expect(keys.create("other", "stolen", first.key)).rejects.toThrow(
      expect.objectContaining({ kind: "unauthorized" }),
    );
  });

  it("still verifies and revokes a key made when its id was the secret's first 12 characters", async () => {
    const { items, keys } = setup();
    const key = "svm_acme_0123456789abcdefghij0123456789abcdefghij";
    const keyId = "key_0123456789ab";
    await items.put({
      pk: "T#acme",
      sk: `KEY#${keyId}`,
      key_id: keyId,
      name: "old",
      prefix: "svm_acme_0123",
      created_at: "2026-01-01T00:00:00.000Z",
      tenant_id: "acme",
      hash: createHash("sha256").update(key).digest("hex"),
    });
    await expect(keys.verify(key)).resolves.toEqual({ tenantId: "acme", keyId });
    expect(await keys.create("acme", "bootstrap", key)).toMatchObject({ key_id: keyId });
    expect((await keys.list("acme")).map((k) => k.key_id)).toEqual([keyId]);
    await keys.revoke("acme", keyId);
    await expect(keys.verify(key)).rejects.toThrow(
      expect.objectContaining({ kind: "unauthorized" }),
    );
  });
});
