/**
 * Plan repair can be turned off for a task (`"replan": false`): a hand-written
 * plan whose step fails then fails with that step's own error and no LLM call,
 * counted on the scripted server; without it, the same failure is repaired by a
 * plan update.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

/** The local stack, started once; its scripted LLM reset before each test. */
const t = useTestStack();

const PLAN = [
  { seq_no: 0, type: "assign", parameters: { a: 6 } },
  { seq_no: 1, type: "assign", parameters: { b: "${a} / 0" } },
  { seq_no: 2, type: "assign", parameters: { final_answer: "${b}" } },
];

beforeEach(() => {
  t.llm.on("plan_update", {
    reasoning: "no division",
    resume_at: 1,
    plan: [PLAN[0], { seq_no: 1, type: "assign", parameters: { final_answer: "${a}" } }],
  });
});

describe("replan: false", () => {
  it("fails a hand-written plan at its failed step with its own error and no LLM call", async () => {
    const created = await t.api("POST", "/v1/tasks", { plan: PLAN, replan: false });
    expect(created.status).toBe(202);
    const done = await t.waitForTask(created.body.task_id);
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/^step 1 failed: \[arithmetic_error\]/);
    expect(done.error).toContain("plan repair is off for this task (replan: false)");
    expect(t.llm.requests).toHaveLength(0);
  });

  it("repairs the same failure with a plan update when replan is left out", async () => {
    const created = await t.api("POST", "/v1/tasks", { plan: PLAN });
    const done = await t.waitForTask(created.body.task_id);
    expect(done).toMatchObject({ status: "completed", final_answer: 6 });
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["plan_update"]);
  });

  it("refuses a replan that is not a boolean, starting nothing", async () => {
    const refused = await t.api("POST", "/v1/tasks", { plan: PLAN, replan: "off" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("replan");
  });
});
