/**
 * The local stack with no LLM configured: a goal is refused at once with a 422
 * that names the settings, and leaves no task; a plan still runs; the start-up
 * banner says that no LLM is configured and what that means.
 */
import { llmBannerLines } from "@stackvm/functions";
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack({ env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined } });

describe("no LLM configured", () => {
  it("answers 422 to a goal, saying which settings to set, and keeps no task", async () => {
    const refused = await t.api("POST", "/v1/tasks", { goal: "Plan my week" });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("llm_not_configured");
    expect(refused.body.error.message).toContain("OPENAI_BASE_URL");
    expect(refused.body.error.message).toContain("LLM_MODEL");
    const listed = await t.api("GET", "/v1/tasks");
    expect(listed.body.tasks).toEqual([]);
  });

  it("runs a plan that needs no LLM", async () => {
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: 42 } }];
    const created = await t.api("POST", "/v1/tasks", { plan });
    expect(created.status).toBe(202);
    const done = await t.waitForTask(created.body.task_id);
    expect(done).toMatchObject({ status: "completed", final_answer: 42 });
  });

  it("says so in the start-up banner", () => {
    expect(t.stack.llm).toBeNull();
    const banner = llmBannerLines(t.stack.llm).join("\n");
    expect(banner).toContain("none configured");
    expect(banner).toContain("OPENAI_BASE_URL");
  });
});

describe("the banner of a configured LLM", () => {
  it("names the endpoint and the models of each role", () => {
    const banner = llmBannerLines({
      endpoint: "http://127.0.0.1:11434/v1",
      models: {
        planner: "qwen3:14b",
        generation: "qwen3:4b",
        evaluation: "qwen3:14b",
        embedding: "nomic-embed-text",
      },
    }).join("\n");
    expect(banner).toContain("http://127.0.0.1:11434/v1");
    expect(banner).toMatch(/planner qwen3:14b, generation qwen3:4b/);
    expect(banner).toContain("embedding nomic-embed-text");
  });
});
