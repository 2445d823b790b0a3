import { describe, expect, it, vi } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { CreateTaskInput } from "./task-input";

const answer = (text: string) => [
  { seq_no: 0, type: "assign", parameters: { final_answer: text } },
];
const start = (sys: ReturnType<typeof integrateSystem>, text: string) =>
  sys.tasks.create("acme", CreateTaskInput.parse({ plan: answer(text) }));

describe("QuotaService.takeRequest", () => {
  it("lets requests_per_second through in one second, refuses the next with Retry-After, and opens the next second", async () => {
    const sys = integrateSystem({ quotas: { requests_per_second: 3 } });
    sys.clock.time = Date.parse("2026-01-01T00:00:00.250Z");
    for (let i = 0; i < 3; i++) await sys.quotas.takeRequest("acme");
    const refused = await sys.quotas.takeRequest("acme").catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "rate_limited", code: "rate_limited" });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeCloseTo(0.75);
    // Another tenant has its own window.
    await sys.quotas.takeRequest("other");
    sys.clock.advance(1000);
    await expect(sys.quotas.takeRequest("acme")).resolves.toBeUndefined();
  });

  it("counts racing requests of one second exactly", async () => {
    const sys = integrateSystem({ quotas: { requests_per_second: 5 } });
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => sys.quotas.takeRequest("acme")),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(5);
  });

  it("takes an operator's override at once on the instance that wrote it", async () => {
    const sys = integrateSystem({ quotas: { requests_per_second: 1 } });
    await sys.quotas.takeRequest("acme");
    await expect(sys.quotas.takeRequest("acme")).rejects.toThrow(/requests per second/);
    expect(
      (await sys.quotas.setOverrides("acme", { requests_per_second: 5 })).requests_per_second,
    ).toBe(5);
    await expect(sys.quotas.takeRequest("acme")).resolves.toBeUndefined();
  });
});

describe("monthly budget", () => {
  it("caps a task's budget at what the month has left, counts it once when it ends, then refuses until next month", async () => {
    const sys = integrateSystem({ quotas: { monthly_token_budget: 20 } });
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ goal: "say hi" }));
    const main = await sys.store.getBranch("acme", task.task_id, "main");
    expect(main?.config.budget.max_tokens).toBe(20);
    // Count usage as a finished task would have spent it.
    await sys.store.updateBranch("acme", task.task_id, "main", {
      add: [
        [["usage", "input_tokens"], 15],
        [["usage", "output_tokens"], 10],
      ],
    });
    await sys.quotas.recordUsage("acme", task.task_id, "main");
    await sys.quotas.recordUsage("acme", task.task_id, "main");
    expect(await sys.quotas.usage("acme")).toMatchObject({ tokens: 25 });
    const refused = await start(sys, "x").catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "rate_limited", code: "monthly_budget_exhausted" });
    const next = Date.parse("2026-02-01T00:00:00Z");
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBe(
      Math.ceil((next - sys.clock.now()) / 1000),
    );
    sys.clock.time = next;
    await expect(start(sys, "x")).resolves.toMatchObject({ replayed: false });
  });
});

describe("running tasks at once", () => {
  it("keeps tasks past the limit queued and starts them, oldest first, as others end", async () => {
    const sys = integrateSystem({ quotas: { max_running_tasks: 1 } });
    const a = (await start(sys, "a")).task.task_id;
    sys.clock.advance(1);
    const b = (await start(sys, "b")).task.task_id;
    sys.clock.advance(1);
    const c = (await start(sys, "c")).task.task_id;
    expect((await sys.store.getBranch("acme", b, "main"))?.status).toBe("queued");
    expect((await sys.tasks.get("acme", c)).status).toBe("queued");
    // Only a's first step is on the queue.
    expect(sys.queue.sent.map((m) => (m.body as { task_id: string }).task_id)).toEqual([a]);
    await sys.drain();
    for (const id of [a, b, c]) expect((await sys.tasks.get("acme", id)).status).toBe("completed");
    const order = sys.queue.sent.map((m) => (m.body as { task_id: string }).task_id);
    expect([...new Set(order)]).toEqual([a, b, c]);
  });

  it("frees the slot of a deleted task in the sweep and starts the waiting one", async () => {
    const sys = integrateSystem({ quotas: { max_running_tasks: 1 } });
    const a = (await start(sys, "a")).task.task_id;
    const b = (await start(sys, "b")).task.task_id;
    await sys.tasks.delete("acme", a);
    await sys.drain();
    expect((await sys.tasks.get("acme", b)).status).toBe("queued");
    sys.clock.advance(60_000);
    expect(await sys.slots.reap(30_000)).toBe(1);
    await sys.drain();
    expect((await sys.tasks.get("acme", b)).status).toBe("completed");
  });

  it("gives another tenant its own slots", async () => {
    const sys = integrateSystem({ quotas: { max_running_tasks: 1 } });
    await start(sys, "a");
    const { task } = await sys.tasks.create("other", CreateTaskInput.parse({ plan: answer("o") }));
    expect((await sys.store.getBranch("other", task.task_id, "main"))?.status).toBe("running");
  });
});

describe("QuotaService.report", () => {
  it("answers the limits, overrides and usage from one read of the overrides, and caches the limits", async () => {
    const sys = integrateSystem({ quotas: { requests_per_second: 7 } });
    // Written by another instance: this one has nothing cached.
    await sys.items.put({
      pk: "T#acme",
      sk: "QUOTAS",
      tenant_id: "acme",
      overrides: { max_running_tasks: 3 },
    });
    const get = vi.spyOn(sys.items, "get");
    const report = await sys.quotas.report("acme");
    expect(report).toEqual({
      tenant: "acme",
      quotas: {
        requests_per_second: 7,
        max_running_tasks: 3,
        max_open_streams: 50,
        monthly_token_budget: null,
        monthly_cost_budget_usd: null,
        retention_days: null,
        file_storage_bytes: 10 * 1024 ** 3,
      },
      overrides: { max_running_tasks: 3 },
      usage: { month: sys.quotas.month(), tokens: 0, cost_usd: 0, file_bytes: 0 },
    });
    expect(get.mock.calls.filter(([key]) => key.sk === "QUOTAS")).toHaveLength(1);
    await sys.quotas.limits("acme");
    expect(get.mock.calls.filter(([key]) => key.sk === "QUOTAS")).toHaveLength(1);
  });

  it("reads nothing of the overrides it is given after setOverrides", async () => {
    const sys = integrateSystem();
    await sys.quotas.setOverrides("acme", { requests_per_second: 5 });
    const get = vi.spyOn(sys.items, "get");
    const report = await sys.quotas.report("acme", { requests_per_second: 5 });
    expect(report).toEqual(await sys.quotas.report("acme"));
    expect(get.mock.calls.filter(([key]) => key.sk === "QUOTAS")).toHaveLength(1);
  });
});
