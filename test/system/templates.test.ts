/**
 * Templates over HTTP: save the plan at a commit, reuse it for the same goal with
 * zero planner calls, show it as an example for a similar goal, list and delete.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Explain what TiDB is." },
      output_vars: ["text"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${text}" } },
];

const t = useTestStack();
beforeEach(() => {
  t.llm.on("plan", { reasoning: "one generation", plan: PLAN });
  t.llm.on("text", "TiDB is a distributed SQL database.");
});

const plannerCalls = () => t.llm.requests.filter((r) => r.schemaName === "plan");

async function run(goal: string) {
  const created = await t.api("POST", "/v1/tasks", { goal });
  expect(created.status).toBe(202);
  const task = await t.waitForTask(created.body.task_id);
  expect(task.status).toBe("completed");
  return task;
}

async function saveHead(taskId: string) {
  const { body: branch } = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
  return t.api("POST", `/v1/tasks/${taskId}/commits/${branch.head}/save-plan`);
}

describe("templates", () => {
  it("reuses a saved plan for the same goal with zero planner calls", async () => {
    const first = await run("What is TiDB?");
    expect(plannerCalls()).toHaveLength(1);
    const saved = await saveHead(first.task_id);
    expect(saved.status).toBe(201);
    expect(saved.body.template_id).toMatch(/^tpl_/);

    t.llm.requests.length = 0;
    const second = await run("  what is TIDB ");
    expect(plannerCalls()).toHaveLength(0);
    expect(second.final_answer).toBe("TiDB is a distributed SQL database.");
    const { body } = await t.api("GET", `/v1/tasks/${second.task_id}/branches/main/commits`);
    const plan = body.commits.at(-1);
    expect(plan).toMatchObject({ type: "plan", llm_calls: [] });
    expect(plan.details.template_id).toBe(saved.body.template_id);
    expect(second.usage.llm_calls).toBe(1);
  });

  it("gives the planner the closest template as an example for a similar goal", async () => {
    const first = await run("What is TiDB Cloud?");
    const saved = await saveHead(first.task_id);
    t.llm.requests.length = 0;
    await run("What is TiDB Cloud Serverless?");
    expect(plannerCalls()).toHaveLength(1);
    const system = plannerCalls()[0]!.messages[0]!.content;
    expect(system).toContain('A plan that worked for a similar goal ("What is TiDB Cloud?")');
    expect(system).toContain("Explain what TiDB is.");
    const list = await t.api("GET", "/v1/templates?namespace=default");
    expect(list.body.templates.map((x: { template_id: string }) => x.template_id)).toContain(
      saved.body.template_id,
    );
  });

  it("lists, reads and deletes templates, and keeps them per tenant", async () => {
    const task = await run("Summarize the TiDB architecture.");
    const saved = await saveHead(task.task_id);
    const id = saved.body.template_id;
    const read = await t.api("GET", `/v1/templates/${id}`);
    expect(read.body).toMatchObject({
      template_id: id,
      goal: "Summarize the TiDB architecture.",
      namespace: "default",
      task_id: task.task_id,
      plan: PLAN,
    });

    const other = await t.api(
      "POST",
      "/v1/admin/tenants/globex/keys",
      { name: "t" },
      { key: ADMIN_KEY },
    );
    expect(other.status).toBe(201);
    expect(
      (await t.api("GET", `/v1/templates/${id}`, undefined, { key: other.body.key })).status,
    ).toBe(404);
    const foreignSave = await t.api(
      "POST",
      `/v1/tasks/${task.task_id}/commits/${read.body.commit_id}/save-plan`,
      undefined,
      { key: other.body.key },
    );
    expect(foreignSave.status).toBe(404);

    expect((await t.api("DELETE", `/v1/templates/${id}`)).status).toBe(204);
    expect((await t.api("GET", `/v1/templates/${id}`)).status).toBe(404);
    const missing = await t.api("POST", `/v1/tasks/${task.task_id}/commits/zzzzzzzz-9/save-plan`);
    expect(missing.status).toBe(404);
  });
});
