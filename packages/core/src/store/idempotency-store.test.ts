import { describe, expect, it } from "vitest";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { IDEMPOTENCY_SECONDS, IdempotencyStore } from "./idempotency-store";

const key = { pk: "T#acme", sk: "IDEM#k1" };

describe("IdempotencyStore", () => {
  it("lets one of many requests sent at once claim a key; the others read its claim", async () => {
    const store = new IdempotencyStore(new MemoryItemStore());
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, n) => store.claim(key, { task_id: `t${n}` }, 1_000)),
    );
    const won = claims.filter((c) => c.claimed);
    expect(won).toHaveLength(1);
    const holders = new Set(claims.map((c) => (c.claimed ? null : c.held?.task_id)));
    holders.delete(null);
    expect(holders.size).toBe(1);
  });

  it("claims an expired key afresh, and a released one", async () => {
    const store = new IdempotencyStore(new MemoryItemStore());
    expect(await store.claim(key, { task_id: "old" }, 1_000)).toEqual({ claimed: true });
    const later = 1_000 + IDEMPOTENCY_SECONDS + 1;
    expect(await store.claim(key, { task_id: "new" }, later)).toEqual({ claimed: true });
    expect((await store.get(key))?.task_id).toBe("new");
    await store.release(key);
    expect(await store.claim(key, { task_id: "third" }, later)).toEqual({ claimed: true });
  });
});
