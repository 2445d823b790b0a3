import { afterEach, describe, expect, it, vi } from "vitest";
import { StreamLeaseStore } from "../store/stream-lease-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { ManualClock } from "../testing/memory-system";
import { LEASE_MS, RENEW_MS, StreamLeases } from "./stream-leases";

afterEach(() => {
  vi.useRealTimers();
});

function leases(limit = 2) {
  const items = new MemoryItemStore();
  const clock = new ManualClock();
  return {
    items,
    clock,
    leases: new StreamLeases({
      leases: new StreamLeaseStore(items),
      clock,
      limit: async () => limit,
    }),
  };
}

describe("StreamLeases", () => {
  it("refuses a stream past the tenant's limit with 429 too_many_streams, and keeps no lease of it", async () => {
    const { leases: l } = leases(2);
    await l.open("acme");
    await l.open("acme");
    const refused = await l.open("acme").catch((e: unknown) => e);
    expect(refused).toMatchObject({
      kind: "rate_limited",
      code: "too_many_streams",
      retryAfterSeconds: RENEW_MS / 1000,
    });
    expect((refused as Error).message).toMatch(/max_open_streams/);
    expect(await l.count("acme")).toBe(2);
  });

  it("counts each tenant apart", async () => {
    const { leases: l } = leases(1);
    await l.open("acme");
    await expect(l.open("globex")).resolves.toBeDefined();
    await expect(l.open("acme")).rejects.toMatchObject({ code: "too_many_streams" });
  });

  it("frees a slot when a stream closes, once however often it is closed", async () => {
    const { leases: l } = leases(1);
    const first = await l.open("acme");
    await first.close();
    await first.close();
    const second = await l.open("acme");
    expect(await l.count("acme")).toBe(1);
    await second.close();
    expect(await l.count("acme")).toBe(0);
  });

  it("never lets streams opened at the same moment past the limit", async () => {
    const { leases: l } = leases(3);
    const opened = await Promise.allSettled(Array.from({ length: 10 }, () => l.open("acme")));
    expect(opened.filter((o) => o.status === "fulfilled").length).toBeLessThanOrEqual(3);
    expect(await l.count("acme")).toBeLessThanOrEqual(3);
  });

  it("frees the slot of a stream whose process died once its lease runs out; a live one renews", async () => {
    vi.useFakeTimers();
    const { leases: l, clock } = leases(1);
    await l.open("acme");
    vi.clearAllTimers(); // its process died: no renewal, no close
    clock.advance(LEASE_MS + 1);
    const live = await l.open("acme");
    // The live stream renews its lease while it runs: still counted past LEASE_MS.
    for (let t = 0; t < LEASE_MS * 2; t += RENEW_MS) {
      clock.advance(RENEW_MS);
      await vi.advanceTimersByTimeAsync(RENEW_MS);
    }
    await expect(l.open("acme")).rejects.toMatchObject({ code: "too_many_streams" });
    await live.close();
    await expect(l.open("acme")).resolves.toBeDefined();
  });
});
