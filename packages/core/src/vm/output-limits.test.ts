import { describe, expect, it } from "vitest";
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { checkOutputs, MAX_VARIABLE_BYTES } from "./output-limits";

/** A plan that doubles a 1 KiB string 13 times (to 8 MiB), then answers. */
function doubling(): unknown[] {
  const plan: unknown[] = [{ seq_no: 0, type: "assign", parameters: { x: "a".repeat(1024) } }];
  for (let i = 1; i <= 13; i++) {
    plan.push({ seq_no: i, type: "assign", parameters: { x: "${x}${x}" } });
  }
  plan.push({ seq_no: 14, type: "assign", parameters: { final_answer: "done" } });
  return plan;
}

describe("checkOutputs", () => {
  it.each([
    [{ a: "x".repeat(MAX_VARIABLE_BYTES) }, "variable_too_large"],
    [
      { a: "x".repeat(3_000_000), b: "x".repeat(3_000_000), c: "x".repeat(3_000_000) },
      "step_output_too_large",
    ],
    [JSON.parse('{"a": {"__proto__": {"x": 1}}}'), "output_forbidden_key"],
    [{ a: JSON.parse(`${"[".repeat(40)}${"]".repeat(40)}`) }, "output_too_deep"],
  ])("refuses %# as a step error", (outputs, code) => {
    expect(() => checkOutputs(outputs)).toThrow(expect.objectContaining({ kind: "step", code }));
  });

  it("accepts outputs within the limits", () => {
    expect(() => checkOutputs({ a: "x".repeat(MAX_VARIABLE_BYTES - 2), b: [[1]] })).not.toThrow();
  });
});

describe("a step whose output is over the limit", () => {
  it("fails once, naming the limit, instead of retrying", async () => {
    const sys = memorySystem({ maxPlanUpdates: 0 });
    const input = CreateTaskInput.parse({ plan: doubling() });
    const { task } = await sys.tasks.create("acme", input);
    await sys.drain();
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got.status).toBe("failed");
    expect(got.error).toMatch(/over the limit of 5242880 bytes per variable/);
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 100, null);
    expect(commits.filter((c) => c.type === "error")).toHaveLength(1);
    // 1 KiB doubled 13 times is 8 MiB, over 5 MiB (12 times, 4 MiB, fits).
    expect(commits[0]).toMatchObject({ type: "error", seq_no: 13 });
  });

  it("takes the plan's error path: a plan update that recovers", async () => {
    const llm = new FakeLlm(() =>
      JSON.stringify({
        reasoning: "keep it small",
        plan: [
          ...doubling().slice(0, 13),
          { seq_no: 13, type: "assign", parameters: { final_answer: "recovered" } },
        ],
        resume_at: 13,
      }),
    );
    const sys = memorySystem({ llm, maxPlanUpdates: 1 });
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: doubling() }));
    await sys.drain();
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got).toMatchObject({ status: "completed", final_answer: "recovered" });
  });
});
