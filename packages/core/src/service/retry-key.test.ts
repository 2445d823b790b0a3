import { describe, expect, it } from "vitest";
import { TaskStore } from "../store/task-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { checkRetryKey, claimRetryKey } from "./retry-key";

const NOW = Date.parse("2026-01-01T00:00:00Z");

describe("a retry's Idempotency-Key", () => {
  it("names one body per tenant and task: another body is 409, another tenant or task is its own key", async () => {
    const items = new TaskStore(new MemoryItemStore());
    await claimRetryKey(items, "t1", "tsk_a", "k", { from: "start" }, NOW);
    // The same body again (a retry delivered twice) is the same claim.
    await claimRetryKey(items, "t1", "tsk_a", "k", { from: "start" }, NOW);
    await expect(
      claimRetryKey(items, "t1", "tsk_a", "k", { from: "last_commit" }, NOW),
    ).rejects.toMatchObject({ code: "idempotency_key_reused" });
    await expect(
      checkRetryKey(items, "t1", "tsk_a", "k", { from: "last_commit" }, NOW),
    ).rejects.toMatchObject({ code: "idempotency_key_reused" });
    // Another tenant, or another task of the tenant, with the same key and another body.
    await claimRetryKey(items, "t2", "tsk_a", "k", { from: "last_commit" }, NOW);
    await claimRetryKey(items, "t1", "tsk_b", "k", { from: "last_commit" }, NOW);
    await checkRetryKey(items, "t2", "tsk_a", "k", { from: "last_commit" }, NOW);
  });

  it("frees a key after its 24 hours", async () => {
    const items = new TaskStore(new MemoryItemStore());
    await claimRetryKey(items, "t1", "tsk_a", "k", { from: "start" }, NOW);
    const first = await claimRetryKey(items, "t1", "tsk_a", "k", { from: "start" }, NOW);
    expect(await checkRetryKey(items, "t1", "tsk_a", "k", { from: "start" }, NOW)).toBe(first);
    const later = NOW + 86_400_000 + 1000;
    expect(await checkRetryKey(items, "t1", "tsk_a", "k", { from: "last_commit" }, later)).toBe(
      null,
    );
    // A new claim names a branch of its own, never the one made the day before.
    const second = await claimRetryKey(items, "t1", "tsk_a", "k", { from: "last_commit" }, later);
    expect(second).not.toBe(first);
    await expect(
      claimRetryKey(items, "t1", "tsk_a", "k", { from: "start" }, later),
    ).rejects.toMatchObject({ code: "idempotency_key_reused" });
  });
});
