import { describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import type { FakeLlm } from "../testing/memory-system";
import { CreateTaskInput } from "./task-input";

/** A plan that asks the LLM (15 tokens a call with the fake) whether to go on, until it is stopped. */
const LOOP = [
  {
    seq_no: 0,
    type: "jmp",
    parameters: { condition_prompt: "Go on?", jump_if_true: 0, jump_if_false: 1 },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
];

/** The fake LLM always says "go on". */
function looping(sys: ReturnType<typeof integrateSystem>) {
  (sys.llm as FakeLlm).answer = () => JSON.stringify({ result: true, explanation: "again" });
  return sys;
}

describe("the month's budget as tasks spend it", () => {
  it("stops six looping tasks of a 200-token month at the month, not at six times it", async () => {
    const sys = looping(
      integrateSystem({ quotas: { monthly_token_budget: 200, max_running_tasks: 2 } }),
    );
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: LOOP }));
      ids.push(task.task_id);
    }
    await sys.drain();

    const usage = await sys.quotas.usage("acme");
    // Two run side by side: each may finish the one call it checked before the end.
    expect(usage.tokens).toBeGreaterThanOrEqual(200);
    expect(usage.tokens).toBeLessThanOrEqual(200 + 2 * 15);
    const tasks = await Promise.all(ids.map((id) => sys.tasks.get("acme", id)));
    const failed = tasks.filter((t) => t.status === "failed");
    expect(failed.length).toBeGreaterThan(0);
    for (const task of failed) expect(task.error).toMatch(/monthly budget of this tenant is spent/);
    // The tasks still queued when the month ran out did not start.
    const queued = tasks.filter((t) => t.status === "queued");
    expect(queued.length).toBeGreaterThan(0);
    for (const task of queued) expect(task.usage.llm_calls).toBe(0);
    // The branch-end hook counts nothing twice: the month is what the tasks spent.
    const spent = tasks.reduce((n, t) => n + t.usage.input_tokens + t.usage.output_tokens, 0);
    expect(usage.tokens).toBe(spent);
  });

  it("writes no meter item for a tenant without a monthly budget, and still counts the month", async () => {
    const sys = looping(integrateSystem({ quotas: { max_running_tasks: 2 } }));
    (sys.llm as FakeLlm).answer = (() => {
      let calls = 0;
      return () => JSON.stringify({ result: ++calls < 3, explanation: "a few times" });
    })();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: LOOP }));
    await sys.drain();
    const done = await sys.tasks.get("acme", task.task_id);
    expect(done.status).toBe("completed");
    const page = await sys.items.query({ pk: "T#acme", prefix: "METERED#" });
    expect(page.items).toEqual([]);
    expect((await sys.quotas.usage("acme")).tokens).toBe(
      done.usage.input_tokens + done.usage.output_tokens,
    );
  });

  it("starts the queued tasks when the month turns", async () => {
    const sys = looping(
      integrateSystem({ quotas: { monthly_token_budget: 30, max_running_tasks: 1 } }),
    );
    const first = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: LOOP }));
    const second = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: LOOP }));
    await sys.drain();
    expect((await sys.tasks.get("acme", first.task.task_id)).status).toBe("failed");
    expect((await sys.tasks.get("acme", second.task.task_id)).status).toBe("queued");

    sys.clock.time = Date.parse("2026-02-01T00:00:00Z");
    await sys.slots.reap(0);
    await sys.drain();
    const started = await sys.tasks.get("acme", second.task.task_id);
    expect(started.status).toBe("failed");
    expect(started.usage.llm_calls).toBeGreaterThan(0);
  });
  it("charges each call once when a step is redelivered after its call was metered, and a branch that ends twice once", async () => {
    const sys = integrateSystem({ quotas: { monthly_token_budget: 10_000 } });
    let calls = 0;
    let crash = false;
    (sys.llm as FakeLlm).answer = () => {
      calls++;
      // The first call's step dies after its call was metered, before its head move.
      if (calls === 1) crash = true;
      return JSON.stringify({ result: calls < 4, explanation: "a few times" });
    };
    const update = sys.items.update.bind(sys.items);
    sys.items.update = async (key, changes, condition, options) => {
      if (crash && key.sk === "B#main") {
        crash = false;
        throw new Error("worker died");
      }
      return update(key, changes, condition, options);
    };
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: LOOP }));
    await sys.drain();
    const done = await sys.tasks.get("acme", task.task_id);
    expect(done.status).toBe("completed");
    // The redelivery made its call again: both were made and both are charged, none twice.
    expect(calls).toBe(done.usage.llm_calls + 1);
    const perCall = (done.usage.input_tokens + done.usage.output_tokens) / done.usage.llm_calls;
    expect((await sys.quotas.usage("acme")).tokens).toBe(calls * perCall);
    // The branch's end delivered again counts nothing more.
    const branch = await sys.store.getBranch("acme", task.task_id, "main");
    await sys.step.onTerminal?.(branch!);
    expect((await sys.quotas.usage("acme")).tokens).toBe(calls * perCall);
  });
});
