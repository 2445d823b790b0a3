/**
 * Planner instructions at their maximum (4,000 characters) on a server with
 * llama.cpp's default context of 4,096 tokens (docs/local-models.md): they are
 * never cut; a namespace with a few tools still gets its plan within the context,
 * with the answer's limit lowered to the room left, and the default namespace
 * with every built-in tool is refused before anything is sent, with
 * `llm_context_exceeded` naming the sizes. Its own file: the worker remembers a
 * server's context for minutes.
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

const MAX = "Prefer one llm_generate step. ".repeat(134).slice(0, 4_000);

describe("planner instructions at their maximum on a 4,096-token server", () => {
  it("sends the whole instructions in a prompt that fits, with the answer's limit lowered", async () => {
    t.llm.listings = { "/props": { default_generation_settings: { n_ctx: 4096 }, total_slots: 1 } };
    expect(MAX).toHaveLength(4_000);
    const put = await t.api("PUT", "/v1/namespaces/small", {
      allowed_tools: ["llm_generate"],
      planner_instructions: MAX,
    });
    expect(put.status).toBe(200);
    t.llm.queue("plan", {
      reasoning: "r",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "ok" } }],
    });
    const created = await t.api("POST", "/v1/tasks", { goal: "Say ok.", namespace: "small" });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task.error)).toBe("completed");
    const plan = t.llm.requests.find((r) => r.schemaName === "plan")!;
    expect(plan.messages[0]!.content).toContain(MAX);
    const limit = (plan.body.max_tokens ?? plan.body.max_completion_tokens) as number;
    expect(limit).toBeGreaterThanOrEqual(256);
    expect(limit).toBeLessThan(2_048);
  });

  it("refuses the default namespace's larger prompt at once, asking the server nothing", async () => {
    t.llm.listings = { "/props": { default_generation_settings: { n_ctx: 4096 }, total_slots: 1 } };
    const tools = await t.api("GET", "/v1/tools");
    const put = await t.api("PUT", "/v1/namespaces/default", {
      allowed_tools: (tools.body.tools as Array<{ name: string }>).map((x) => x.name),
      planner_instructions: MAX,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto." });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/^the plan prompt is about [\d,]+ tokens \([\d,]+ characters\)/);
    expect(task.error).toContain("context of 4,096 tokens (as the server says)");
    expect(t.llm.requests).toHaveLength(0);
  });
});
