import { describe, expect, it } from "vitest";
import type { Plan } from "../plan/schema";
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";

async function run(plan: Plan, budget?: { max_steps: number }) {
  // Every condition is true: a conditional jump back loops until the budget stops it.
  const llm = new FakeLlm(() => '{"result": true, "explanation": "again"}');
  const sys = memorySystem({ llm, maxPlanUpdates: 0 });
  const { task } = await sys.tasks.create(
    "acme",
    CreateTaskInput.parse({ plan, ...(budget ? { budget } : {}) }),
  );
  await sys.drain();
  const done = await sys.tasks.get("acme", task.task_id);
  const { commits } = await sys.branches.commits("acme", task.task_id, "main", 100, null);
  return { task: done, types: commits.map((c) => c.type).reverse() };
}

describe("usage.steps", () => {
  it("counts 2 for a plan of two instructions, not its plan commit", async () => {
    const { task, types } = await run([
      { seq_no: 0, type: "assign", parameters: { a: 20 } },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${a} * 2" } },
    ]);
    expect(task).toMatchObject({ status: "completed", final_answer: 40 });
    expect(types).toEqual(["plan", "step", "step"]);
    expect(task.usage.steps).toBe(2);
  });

  it("counts an instruction that failed, as it ran", async () => {
    const { task, types } = await run([
      { seq_no: 0, type: "assign", parameters: { a: 1 } },
      {
        seq_no: 1,
        type: "calling",
        parameters: {
          tool_name: "http_request",
          tool_params: { url: "https://not-allowed.example.com/" },
          output_vars: "page",
        },
      },
      { seq_no: 2, type: "assign", parameters: { final_answer: "${page}" } },
    ]);
    expect(task.status).toBe("failed");
    expect(types).toEqual(["plan", "step", "error"]);
    expect(task.usage.steps).toBe(2);
  });

  it("stops at max_steps instructions, and the commit that says so is not one", async () => {
    const { task, types } = await run(
      [
        { seq_no: 0, type: "assign", parameters: { i: 0 } },
        { seq_no: 1, type: "assign", parameters: { i: "${i} + 1" } },
        {
          seq_no: 2,
          type: "jmp",
          parameters: { condition_prompt: "again?", jump_if_true: 1, jump_if_false: 3 },
        },
        { seq_no: 3, type: "assign", parameters: { final_answer: "${i}" } },
      ],
      { max_steps: 5 },
    );
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/max_steps budget spent: 5 of 5 steps used/);
    expect(types).toEqual(["plan", "step", "step", "step", "step", "step", "error"]);
    expect(task.usage.steps).toBe(5);
  });
});
