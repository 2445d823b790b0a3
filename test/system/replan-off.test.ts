/**
 * Plan repair can be turned off for a task or a namespace (`"replan": false`,
 * the task's own value winning): a hand-written
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

  it("fails a task of a namespace with replan: false at its step, with no LLM call", async () => {
    const put = await t.api("PUT", "/v1/namespaces/no-repair", { replan: false });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.replan).toBe(false);
    expect((await t.api("GET", "/v1/namespaces/no-repair")).body.replan).toBe(false);
    const created = await t.api("POST", "/v1/tasks", { plan: PLAN, namespace: "no-repair" });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await t.waitForTask(created.body.task_id);
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/^step 1 failed: \[arithmetic_error\]/);
    expect(done.error).toContain("plan repair is off for namespace no-repair (replan: false");
    expect(t.llm.requests).toHaveLength(0);
  });

  it("lets a task's replan: true win over its namespace's false", async () => {
    await t.api("PUT", "/v1/namespaces/no-repair", { replan: false });
    const created = await t.api("POST", "/v1/tasks", {
      plan: PLAN,
      namespace: "no-repair",
      replan: true,
    });
    const done = await t.waitForTask(created.body.task_id);
    expect(done).toMatchObject({ status: "completed", final_answer: 6 });
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["plan_update"]);
  });

  it("turns repair back on when the namespace is put without replan", async () => {
    const put = await t.api("PUT", "/v1/namespaces/no-repair", {});
    expect(put.body).not.toHaveProperty("replan");
    const created = await t.api("POST", "/v1/tasks", { plan: PLAN, namespace: "no-repair" });
    const done = await t.waitForTask(created.body.task_id);
    expect(done).toMatchObject({ status: "completed", final_answer: 6 });
  });

  it("refuses a namespace replan that is not a boolean, changing nothing", async () => {
    const refused = await t.api("PUT", "/v1/namespaces/bad-repair", { replan: "no" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("replan");
    expect((await t.api("GET", "/v1/namespaces/bad-repair")).status).toBe(404);
  });

  it("refuses a replan that is not a boolean, starting nothing", async () => {
    const refused = await t.api("POST", "/v1/tasks", { plan: PLAN, replan: "off" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("replan");
  });
});
