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

  it("holds a key for the seconds asked, then lets it be claimed afresh", async () => {
    const store = new IdempotencyStore(new MemoryItemStore());
    expect(await store.claim(key, { task_id: "a" }, 1_000, 60)).toEqual({ claimed: true });
    expect((await store.claim(key, { task_id: "b" }, 1_059, 60)).claimed).toBe(false);
    expect(await store.claim(key, { task_id: "c" }, 1_061, 60)).toEqual({ claimed: true });
  });

  it("marks a claim answered only while it holds the task it was made for", async () => {
    const store = new IdempotencyStore(new MemoryItemStore());
    await store.markAnswered(key, "none");
    expect(await store.get(key)).toBeNull();
    await store.claim(key, { task_id: "a" }, 1_000, 60);
    await store.markAnswered(key, "b");
    expect((await store.get(key))?.answered).toBeUndefined();
    await store.markAnswered(key, "a");
    expect(await store.get(key)).toMatchObject({ task_id: "a", answered: true });
    // A takeover (a new question) starts unanswered.
    expect(await store.takeOver(key, "a", { task_id: "c" }, 1_010, 60)).toBe(true);
    expect((await store.get(key))?.answered).toBeUndefined();
  });

  it("lets one of many takeovers of the same claim win", async () => {
    const store = new IdempotencyStore(new MemoryItemStore());
    await store.claim(key, { task_id: "held" }, 1_000, 60);
    const won = await Promise.all(
      Array.from({ length: 8 }, (_, n) =>
        store.takeOver(key, "held", { task_id: `t${n}` }, 1_000, 60),
      ),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await store.takeOver(key, "held", { task_id: "late" }, 1_000, 60)).toBe(false);
  });

  it("releases a key only while the claim named holds it", async () => {
    const store = new IdempotencyStore(new MemoryItemStore());
    await store.claim(key, { task_id: "first" }, 1_000, 60);
    await store.takeOver(key, "first", { task_id: "second" }, 1_000, 60);
    await store.release(key, "first");
    expect((await store.get(key))?.task_id).toBe("second");
    await store.release(key, "second");
    expect(await store.get(key)).toBeNull();
  });
});
