// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * StackVM's plans through the whole local stack (issue 24): the namespace of
 * docs/knowledge.md (StackVM's three tools, compatibility mode), checks and runs
 * in either mode, `response_format: null` as StackVM's own example sends it,
 * and a bad `plan_compat` refused with nothing left behind.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

/** The body of the namespace example on docs/knowledge.md, as the page gives it. */
const docsNamespace = () => {
  const page = readFileSync(new URL("../../docs/knowledge.md", import.meta.url), "utf8");
  const example = /v1\/namespaces\/stackvm[^\n]*\n[^\n]*-d '([^']+)'/.exec(page);
  if (!example) throw new Error("docs/knowledge.md has no StackVM namespace example");
  return JSON.parse(example[1]!) as Record<string, unknown>;
};

/** A production plan of StackVM's (test/fixtures) that references a variable nothing sets. */
const production = JSON.parse(
  readFileSync(new URL("../fixtures/stackvm-production-plans.json", import.meta.url), "utf8"),
) as { plans: Array<{ cause: string; plan: unknown[] }> };
const unsetPlan = production.plans.find((p) => p.cause.includes("nothing sets ("))!.plan;

/** Issue 24's first plan: typed as a tool, its parameters already a calling's. */
const toolTyped = [
  {
    seq_no: 0,
    type: "llm_generate",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Say hi" },
      output_vars: ["final_answer"],
    },
  },
];
const unset = [
  { seq_no: 0, type: "assign", parameters: { final_answer: "Notes: ${user_provided_content}" } },
];
const taskCount = async () => (await t.api("GET", "/v1/tasks")).body.tasks.length;

describe("StackVM plans through the local stack", () => {
  it("creates docs/knowledge.md's namespace, which allows StackVM's tools in compatibility mode", async () => {
    const put = await t.api("PUT", "/v1/namespaces/stackvm", docsNamespace());
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      allowed_tools: ["llm_generate", "vector_search", "retrieve_knowledge_graph"],
      plan_compat: "stackvm",
    });
    expect((await t.api("GET", "/v1/namespaces/default")).body.plan_compat).toBe("strict");

    const checked = await t.api("POST", "/v1/plans/validate", {
      plan: unsetPlan,
      namespace: "stackvm",
    });
    expect(checked.body.valid).toBe(true);
    expect(checked.body.warnings.map((w: { code: string }) => w.code)).toContain(
      "unknown_variable",
    );
  });

  it("checks a plan strict by default, and in either mode on request", async () => {
    const strict = await t.api("POST", "/v1/plans/validate", { plan: unsetPlan });
    expect(strict.body.valid).toBe(false);
    expect(strict.body.problems.map((p: { code: string }) => p.code)).toEqual(["unknown_variable"]);
    const stackvm = await t.api("POST", "/v1/plans/validate", {
      plan: unsetPlan,
      plan_compat: "stackvm",
    });
    expect(stackvm.body.valid).toBe(true);
    const back = await t.api("POST", "/v1/plans/validate", {
      plan: unsetPlan,
      namespace: "stackvm",
      plan_compat: "strict",
    });
    expect(back.body.valid).toBe(false);
  });

  it("runs issue 24's tool-typed plan with response_format null, as StackVM's example sends it", async () => {
    t.llm.on("text", "Hi!");
    const started = await t.api("POST", "/v1/tasks", {
      plan: toolTyped,
      namespace: "stackvm",
      response_format: null,
    });
    expect(started.status).toBe(202);
    expect(started.body.warnings.map((w: { code: string }) => w.code)).toEqual(["tool_as_type"]);
    const done = await t.waitForTask(started.body.task_id);
    expect(done).toMatchObject({ status: "completed", final_answer: "Hi!", response_format: {} });
  });

  it("runs a reference nothing sets as its text in compatibility mode, and refuses it strict", async () => {
    const started = await t.api("POST", "/v1/tasks", { plan: unset, namespace: "stackvm" });
    expect(started.status).toBe(202);
    const done = await t.waitForTask(started.body.task_id);
    expect(done.final_answer).toBe("Notes: ${user_provided_content}");

    const before = await taskCount();
    const refused = await t.api("POST", "/v1/tasks", { plan: unset });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("invalid_plan");
    const override = await t.api("POST", "/v1/tasks", { plan: unset, plan_compat: "stackvm" });
    expect(override.status).toBe(202);
    expect(await taskCount()).toBe(before + 1);
  });

  it("refuses an unknown plan_compat with what to send, and starts nothing", async () => {
    const before = await taskCount();
    const task = await t.api("POST", "/v1/tasks", { plan: unset, plan_compat: "lenient" });
    expect(task.status).toBe(400);
    expect(JSON.stringify(task.body.error)).toMatch(/strict.*stackvm|plan_compat/);
    const ns = await t.api("PUT", "/v1/namespaces/loose", { plan_compat: "loose" });
    expect(ns.status).toBe(400);
    expect((await t.api("GET", "/v1/namespaces/loose")).status).toBe(404);
    expect(await taskCount()).toBe(before);
  });
});
