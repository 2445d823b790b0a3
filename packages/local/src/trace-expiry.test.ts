import { silentLog } from "@stackvm/core";
import { MemoryBlobs } from "@stackvm/core/testing";
import { describe, expect, it } from "vitest";
import { startTraceExpiry } from "./trace-expiry";

const DAY = 86_400_000;
const bytes = (s: string) => new TextEncoder().encode(s);

describe("startTraceExpiry", () => {
  it("deletes the traces past the retention, and nothing else", async () => {
    let now = Date.parse("2026-03-01T00:00:00Z");
    const clock = { now: () => now };
    const blobs = new MemoryBlobs({ clock });
    const old = await blobs.put("llm/acme/task1", bytes("old trace"), "application/json");
    const value = await blobs.put("t/acme/task1", bytes("a large value"), "application/json");
    now += 20 * DAY;
    const recent = await blobs.put("llm/acme/task1", bytes("new trace"), "application/json");
    now += 11 * DAY;

    const expiry = startTraceExpiry({ blobs, retentionDays: 30, clock, log: silentLog });
    try {
      // The start ran once already; this run finds the same state.
      await expiry.runOnce();
      expect(await blobs.get("llm/acme/task1", old.sha256)).toBeNull();
      expect(await blobs.get("llm/acme/task1", recent.sha256)).toEqual(bytes("new trace"));
      expect(await blobs.get("t/acme/task1", value.sha256)).toEqual(bytes("a large value"));
      now += 20 * DAY;
      expect(await expiry.runOnce()).toBe(1);
      expect(await blobs.get("llm/acme/task1", recent.sha256)).toBeNull();
    } finally {
      expiry.stop();
    }
  });
});
