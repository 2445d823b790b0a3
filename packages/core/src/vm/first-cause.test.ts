import { describe, expect, it } from "vitest";
import type { Plan } from "../plan/schema";
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { firstCause, whyNotRepaired } from "./first-cause";

/** A plan whose second step divides by zero. */
const divides: Plan = [
  { seq_no: 0, type: "assign", parameters: { a: 6 } },
  { seq_no: 1, type: "assign", parameters: { b: "${a} / 0" } },
  { seq_no: 2, type: "assign", parameters: { final_answer: "${b}" } },
];

async function run(sys: ReturnType<typeof memorySystem>) {
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: divides }));
  await sys.drain();
  const done = await sys.tasks.get("acme", task.task_id);
  const { commits } = await sys.branches.commits("acme", task.task_id, "main", 100, null);
  return { done, commits };
}

describe("the first cause of a failed task", () => {
  it("ends the branch at the failed step, with no plan update, when no LLM is configured", async () => {
    const sys = memorySystem({ llmConfigured: false });
    const { done, commits } = await run(sys);
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/^step 1 failed: \[arithmetic_error\] Cannot compute "6 \/ 0"/);
    expect(done.error).toMatch(/No plan update was tried: no LLM is configured/);
    expect(commits.map((c) => c.type)).toEqual(["error", "step", "plan"]);
    expect(sys.llm.requests).toHaveLength(0);
  });

  it("leads with the step's error when the plan update that followed fails validation", async () => {
    const llm = new FakeLlm(() => JSON.stringify({ reasoning: "none", resume_at: 0, plan: [] }));
    const sys = memorySystem({ llm });
    const { done, commits } = await run(sys);
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/^step 1 failed: \[arithmetic_error\] Cannot compute "6 \/ 0"/);
    expect(done.error).toMatch(/Then the plan update failed: \[\w+\] .*validation/);
    expect(commits.map((c) => c.type)).toEqual(["error", "error", "step", "plan"]);
    expect(llm.requests.length).toBeGreaterThan(0);
  });

  it("says that no plan update was left when the branch used them all", async () => {
    const sys = memorySystem({ maxPlanUpdates: 0 });
    const { done } = await run(sys);
    expect(done.error).toMatch(/^step 1 failed: \[arithmetic_error\]/);
    expect(done.error).toMatch(/No plan update left \(0 of 0 used\)\.$/);
  });
});

describe("whyNotRepaired", () => {
  it.each([
    ["arithmetic_error", 0, true, null],
    ["arithmetic_error", 0, false, /no LLM is configured/],
    ["llm_not_configured", 0, undefined, /no LLM is configured/],
    ["budget_exceeded", 0, true, /needs the same LLM/],
    ["llm_unreachable", 0, true, /needs the same LLM/],
    ["arithmetic_error", 3, true, /no plan update left \(3 of 3 used\)/],
  ] as const)("for %s after %i updates (LLM %s): %s", (code, updates, llmConfigured, want) => {
    const why = whyNotRepaired(
      code,
      { updates },
      { maxPlanUpdates: 3, ...(llmConfigured === undefined ? {} : { llmConfigured }) },
    );
    if (want === null) expect(why).toBeNull();
    else expect(why).toMatch(want);
  });

  it.each([
    [undefined, false, /off for namespace ops \(replan: false;/],
    [false, undefined, /off for this task \(replan: false\)/],
    [false, false, /off for this task/],
    [true, false, null],
    [undefined, undefined, null],
  ] as const)("with the task's replan %s and the namespace's %s: %s", (task, ns, want) => {
    const why = whyNotRepaired(
      "arithmetic_error",
      {
        updates: 0,
        config: {
          ...(task === undefined ? {} : { replan: task }),
          namespace: { name: "ops", ...(ns === undefined ? {} : { replan: ns }) },
        },
      },
      { maxPlanUpdates: 3 },
    );
    if (want === null) expect(why).toBeNull();
    else expect(why).toMatch(want);
  });

  it("writes the cause and the reason as two sentences", () => {
    const text = firstCause({ code: "x", message: "it broke.", seq_no: null }, "then nothing");
    expect(text).toBe("a step failed: [x] it broke. Then nothing.");
  });
});
