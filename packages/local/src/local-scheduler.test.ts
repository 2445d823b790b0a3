import type { DueRun } from "@stackvm/core";
import { silentLog } from "@stackvm/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalScheduler } from "./local-scheduler";

const berlin = {
  tenant_id: "acme",
  schedule_id: "sch_morning",
  cron: "0 9 * * *",
  timezone: "Europe/Berlin",
  enabled: true,
};

function scheduler() {
  const runs: DueRun[] = [];
  const local = new LocalScheduler({
    fire: async (run) => {
      runs.push(run);
    },
    log: silentLog,
  });
  return { local, runs };
}

const at = (iso: string) => Date.parse(iso);

afterEach(() => {
  vi.useRealTimers();
});

describe("LocalScheduler", () => {
  it("fires 09:00 Europe/Berlin once at the right UTC instant on both sides of the spring change", async () => {
    vi.useFakeTimers({ now: at("2026-03-27T12:00:00Z") });
    const { local, runs } = scheduler();
    await local.put(berlin);
    // Winter time: 09:00 CET is 08:00 UTC.
    await vi.advanceTimersByTimeAsync(at("2026-03-28T07:59:59Z") - Date.now());
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toEqual([{ ...key(berlin), due_at: "2026-03-28T08:00:00.000Z" }]);
    // Summer time from 29 March: 09:00 CEST is 07:00 UTC.
    await vi.advanceTimersByTimeAsync(at("2026-03-29T06:59:59Z") - Date.now());
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs.map((r) => r.due_at)).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
    ]);
    await vi.advanceTimersByTimeAsync(24 * 3600_000 - 1_000);
    expect(runs).toHaveLength(2);
    local.stop();
  });

  it("fires at 08:00 UTC again after the autumn change", async () => {
    vi.useFakeTimers({ now: at("2026-10-24T12:00:00Z") });
    const { local, runs } = scheduler();
    await local.put(berlin);
    await vi.advanceTimersByTimeAsync(at("2026-10-26T12:00:00Z") - Date.now());
    expect(runs.map((r) => r.due_at)).toEqual([
      "2026-10-25T08:00:00.000Z",
      "2026-10-26T08:00:00.000Z",
    ]);
    local.stop();
  });

  it("fires nothing for a disabled or deleted schedule, and takes a changed cron at once", async () => {
    vi.useFakeTimers({ now: at("2026-01-01T00:00:30Z") });
    const { local, runs } = scheduler();
    await local.put({ ...berlin, cron: "* * * * *", enabled: false });
    await local.put({ ...berlin, schedule_id: "sch_other", cron: "* * * * *" });
    await local.delete("acme", "sch_other");
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(runs).toEqual([]);
    await local.put({ ...berlin, cron: "*/2 * * * *" });
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(runs.map((r) => r.due_at)).toEqual([
      "2026-01-01T00:06:00.000Z",
      "2026-01-01T00:08:00.000Z",
      "2026-01-01T00:10:00.000Z",
    ]);
    local.stop();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(runs).toHaveLength(3);
  });

  it("reaches a run further away than setTimeout's longest delay", async () => {
    vi.useFakeTimers({ now: at("2026-01-01T00:00:00Z") });
    const { local, runs } = scheduler();
    await local.put({ ...berlin, cron: "0 0 1 3 *", timezone: "UTC" });
    await vi.advanceTimersByTimeAsync(at("2026-03-01T00:00:00Z") - Date.now());
    expect(runs.map((r) => r.due_at)).toEqual(["2026-03-01T00:00:00.000Z"]);
    local.stop();
  });
});

function key(t: typeof berlin) {
  return { tenant_id: t.tenant_id, schedule_id: t.schedule_id };
}
