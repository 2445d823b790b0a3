/**
 * A namespace's planner instructions (issue 43): saved with the namespace, read by
 * the planner in its plan and plan-update prompts (asserted on what the scripted
 * server received), shown in the plan commit, never in another tenant's prompt,
 * and bounded with a clear refusal.
 */
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const t = useTestStack();

const INSTRUCTIONS = "Always answer in French. Name the source of every fact.";
const PLAN = {
  reasoning: "one step",
  plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "Bonjour" } }],
};

async function otherTenantKey(tenant: string): Promise<string> {
  const made = await t.api(
    "POST",
    `/v1/admin/tenants/${tenant}/keys`,
    { name: "k" },
    {
      key: ADMIN_KEY,
    },
  );
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.key as string;
}

const planPrompt = (index = -1) => {
  const plans = t.llm.requests.filter((r) => r.schemaName === "plan");
  return plans.at(index)!.messages[0]!.content;
};

describe("a namespace's planner instructions", () => {
  it("answers with them saved, and puts them in the plan prompt and the plan commit", async () => {
    const put = await t.api("PUT", "/v1/namespaces/french", {
      allowed_tools: ["llm_generate"],
      planner_instructions: `  ${INSTRUCTIONS}\n`,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.planner_instructions).toBe(INSTRUCTIONS);

    t.llm.queue("plan", PLAN);
    const created = await t.api("POST", "/v1/tasks", { goal: "Greet me.", namespace: "french" });
    expect(created.status).toBe(202);
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status).toBe("completed");
    expect(planPrompt()).toContain(`Instructions for this namespace's plans`);
    expect(planPrompt()).toContain(INSTRUCTIONS);

    const { body } = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`);
    const planCommit = (body.commits as Array<Record<string, any>>).find((c) => c.type === "plan");
    expect(planCommit!.details.planner_instructions).toBe(INSTRUCTIONS);
  });

  it("changes the plan prompt by what they say, and a namespace without them has none", async () => {
    t.llm.queue("plan", PLAN, PLAN);
    await t.api("PUT", "/v1/namespaces/plain", { allowed_tools: ["llm_generate"] });
    for (const namespace of ["plain", "french"]) {
      const created = await t.api("POST", "/v1/tasks", { goal: "Greet me.", namespace });
      expect((await t.waitForTask(created.body.task_id)).status).toBe("completed");
    }
    const [plain, french] = [planPrompt(-2), planPrompt(-1)];
    expect(plain).not.toContain("Instructions for this namespace");
    expect(french.replace(/\nInstructions for this namespace's plans[^\n]*\n[^\n]*\n/, "")).toBe(
      plain,
    );
  });

  it("puts them in the plan-update prompt after a step fails", async () => {
    await t.api("PUT", "/v1/namespaces/french-http", {
      allowed_tools: ["http_request"],
      planner_instructions: INSTRUCTIONS,
    });
    t.llm.queue("plan", {
      reasoning: "fetch",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "http_request",
            tool_params: { url: "https://not-allowed.example/" },
            output_vars: ["page"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${page}" } },
      ],
    });
    t.llm.queue("plan_update", { ...PLAN, resume_at: 0 });
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Fetch the page.",
      namespace: "french-http",
    });
    expect((await t.waitForTask(created.body.task_id)).status).toBe("completed");
    const update = t.llm.requests.find((r) => r.schemaName === "plan_update");
    expect(update!.messages[0]!.content).toContain(INSTRUCTIONS);
    const { body } = await t.api("GET", `/v1/tasks/${created.body.task_id}/branches/main/commits`);
    const commit = (body.commits as Array<Record<string, any>>).find(
      (c) => c.type === "plan_update",
    );
    expect(commit!.details.planner_instructions).toBe(INSTRUCTIONS);
  });

  it("never puts one tenant's instructions in another tenant's prompt for the same namespace name", async () => {
    const key = await otherTenantKey("globex");
    const own = await t.api("GET", "/v1/namespaces/french", undefined, { key });
    expect(own.status).toBe(404);
    await t.api("PUT", "/v1/namespaces/french", { allowed_tools: ["llm_generate"] }, { key });
    t.llm.queue("plan", PLAN);
    const created = await t.api(
      "POST",
      "/v1/tasks",
      { goal: "Greet me.", namespace: "french" },
      { key },
    );
    expect((await t.waitForTask(created.body.task_id, { key })).status).toBe("completed");
    expect(planPrompt()).not.toContain(INSTRUCTIONS);
    expect(planPrompt()).not.toContain("Instructions for this namespace");
  });

  it("refuses instructions over 4,000 characters or not text, saving nothing", async () => {
    const long = await t.api("PUT", "/v1/namespaces/too-long", {
      allowed_tools: [],
      planner_instructions: "x".repeat(4_001),
    });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("malformed_request");
    expect(JSON.stringify(long.body)).toContain("planner_instructions must be at most 4,000");
    const wrong = await t.api("PUT", "/v1/namespaces/too-long", {
      allowed_tools: [],
      planner_instructions: ["a list"],
    });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toContain("planner_instructions");
    expect((await t.api("GET", "/v1/namespaces/too-long")).status).toBe(404);
    const kept = await t.api("PUT", "/v1/namespaces/too-long", {
      allowed_tools: [],
      planner_instructions: "y".repeat(4_000),
    });
    expect(kept.status).toBe(200);
    expect(kept.body.planner_instructions).toHaveLength(4_000);
  });

  it("clears them when saved empty", async () => {
    const put = await t.api("PUT", "/v1/namespaces/french", {
      allowed_tools: ["llm_generate"],
      planner_instructions: "",
    });
    expect(put.status).toBe(200);
    expect(put.body.planner_instructions).toBeUndefined();
  });
});
