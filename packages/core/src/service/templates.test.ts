import { describe, expect, it } from "vitest";
import { createPlanner } from "../planning/planner";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { CreateTaskInput } from "./task-input";
import { goalSimilarity, normalizeGoal, SIMILARITY_THRESHOLD, TemplateService } from "./templates";

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Summarize TiDB." },
      output_vars: ["s"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${s}" } },
];

function systemWithTemplates() {
  const llm = new FakeLlm((request) =>
    request.jsonSchema?.name === "plan" ? JSON.stringify({ reasoning: "r", plan: PLAN }) : "text",
  );
  const sys = memorySystem({ llm });
  const templates = new TemplateService({
    templates: sys.stores.templates,
    clock: sys.clock,
    tasks: sys.tasks,
    branches: sys.branches,
  });
  sys.step.planner = createPlanner({
    clock: sys.clock,
    repairRounds: 2,
    findTemplate: (tenant, namespace, goal) => templates.find(tenant, namespace, goal),
  });
  return { ...sys, templates };
}

async function run(sys: ReturnType<typeof systemWithTemplates>, goal: string) {
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ goal }));
  await sys.drain();
  return task.task_id;
}

describe("normalizeGoal", () => {
  it.each([
    ["What is TiDB?", "what is tidb"],
    ["  What   is\nTiDB ?! ", "what is tidb"],
    ["Summarize, then translate.", "summarize, then translate"],
  ])("normalizes %j to %j", (goal, normalized) => {
    expect(normalizeGoal(goal)).toBe(normalized);
  });
});

describe("goalSimilarity", () => {
  it("scores close goals above the threshold and unrelated ones below it", () => {
    expect(goalSimilarity("what is tidb", "what is tidb")).toBe(1);
    expect(goalSimilarity("what is tidb", "what is tidb serverless")).toBeGreaterThan(
      SIMILARITY_THRESHOLD,
    );
    expect(goalSimilarity("what is tidb", "bake a lemon cake")).toBeLessThan(SIMILARITY_THRESHOLD);
  });
});

describe("TemplateService", () => {
  it("reuses a saved plan for the same normalized goal with no LLM call", async () => {
    const sys = systemWithTemplates();
    const first = await run(sys, "What is TiDB?");
    const branch = await sys.store.getBranch("acme", first, "main");
    const { template_id } = await sys.templates.save("acme", first, branch!.head!);
    expect(template_id).toMatch(/^tpl_/);
    const calls = sys.llm.requests.length;

    const second = await run(sys, "  what is tidb ");
    const planCalls = sys.llm.requests.slice(calls).filter((r) => r.jsonSchema?.name === "plan");
    expect(planCalls).toHaveLength(0);
    const { commits } = await sys.branches.commits("acme", second, "main", 10, null);
    const plan = commits.find((c) => c.type === "plan")!;
    expect(plan.llm_calls).toEqual([]);
    expect(plan.details).toMatchObject({ template_id });
    expect((await sys.tasks.get("acme", second)).status).toBe("completed");
  });

  it("shows the closest saved plan to the planner as an example for a similar goal", async () => {
    const sys = systemWithTemplates();
    const first = await run(sys, "What is TiDB?");
    const branch = await sys.store.getBranch("acme", first, "main");
    const { template_id } = await sys.templates.save("acme", first, branch!.head!);
    const calls = sys.llm.requests.length;

    const second = await run(sys, "What is TiDB Serverless?");
    const plan = sys.llm.requests.slice(calls).find((r) => r.jsonSchema?.name === "plan")!;
    expect(plan.messages[0]!.content).toContain('similar goal ("What is TiDB?")');
    const { commits } = await sys.branches.commits("acme", second, "main", 10, null);
    expect(commits.find((c) => c.type === "plan")!.details).toMatchObject({
      example_template: template_id,
    });
  });

  it("finds nothing for an unrelated goal or another namespace", async () => {
    const sys = systemWithTemplates();
    const first = await run(sys, "What is TiDB?");
    const branch = await sys.store.getBranch("acme", first, "main");
    await sys.templates.save("acme", first, branch!.head!);
    expect(await sys.templates.find("acme", "default", "Bake a lemon cake")).toBeNull();
    expect(await sys.templates.find("acme", "other", "What is TiDB?")).toBeNull();
    expect(await sys.templates.find("globex", "default", "What is TiDB?")).toBeNull();
  });

  it("lists, reads and deletes templates; saving the same goal again replaces it", async () => {
    const sys = systemWithTemplates();
    const first = await run(sys, "What is TiDB? (Lang: Japanese)");
    const head = (await sys.store.getBranch("acme", first, "main"))!.head!;
    const a = await sys.templates.save("acme", first, head);
    const b = await sys.templates.save("acme", first, head);
    expect(b.template_id).toBe(a.template_id);
    const { templates } = await sys.templates.list("acme", { limit: 20 });
    expect(templates).toHaveLength(1);
    expect(templates[0]).toMatchObject({
      goal: "What is TiDB?",
      namespace: "default",
      task_id: first,
      commit_id: head,
    });
    expect((await sys.templates.get("acme", a.template_id)).plan).toEqual(PLAN);
    await expect(sys.templates.get("globex", a.template_id)).rejects.toMatchObject({
      kind: "not_found",
    });
    await sys.templates.delete("acme", a.template_id);
    await expect(sys.templates.get("acme", a.template_id)).rejects.toMatchObject({
      kind: "not_found",
    });
  });

  it("refuses a task without a goal with a message that says why", async () => {
    const sys = systemWithTemplates();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await sys.drain();
    const head = (await sys.store.getBranch("acme", task.task_id, "main"))!.head!;
    await expect(sys.templates.save("acme", task.task_id, head)).rejects.toMatchObject({
      kind: "invalid",
      code: "no_goal",
    });
    await expect(sys.templates.save("globex", task.task_id, head)).rejects.toMatchObject({
      kind: "not_found",
    });
  });
});
