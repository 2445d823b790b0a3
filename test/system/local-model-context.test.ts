/**
 * A local server whose context cannot hold the plan prompt, through the local
 * stack: the worker reads the context from llama.cpp's `/props` (as the scripted
 * server lists it), sends nothing the server would refuse, and fails the task at
 * once with `llm_context_exceeded` and the setting to change; nothing is left
 * running. Then the server is restarted with a larger context (its `/props`
 * says so): the next task's prompt, which the remembered context cannot hold,
 * asks the server again and runs at once, not five minutes later. Its own
 * file: the worker remembers a server's context for minutes.
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

describe("a server context too small for the plan prompt", () => {
  it("fails the task at once with llm_context_exceeded, asking the server nothing", async () => {
    t.llm.listings = { "/props": { default_generation_settings: { n_ctx: 1024 }, total_slots: 1 } };
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Describe Kyoto for a first-time visitor",
    });
    expect(created.status).toBe(202);
    const task = await t.waitForTask(created.body.task_id as string);
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/^the plan prompt is about [\d,]+ tokens \([\d,]+ characters\)/);
    expect(task.error).toContain("context of 1,024 tokens (as the server says)");
    expect(task.error).toContain("LLM_CONTEXT_TOKENS");
    expect(t.llm.requests).toHaveLength(0);
    // The failure is committed with its code, and nothing is left running.
    const commits = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`);
    expect(JSON.stringify(commits.body)).toContain("llm_context_exceeded");
    const { body } = await t.api("GET", `/v1/tasks/${task.task_id}/branches`);
    expect(JSON.stringify(body)).not.toContain('"running"');
  });

  it("sees a server restarted with a larger context at the next task, not minutes later", async () => {
    // The first test left the worker remembering 1,024 tokens; the server now gives 32,768.
    t.llm.listings = {
      "/props": { default_generation_settings: { n_ctx: 32_768 }, total_slots: 1 },
    };
    t.llm.on("plan", {
      reasoning: "one step",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "Kyoto has temples." } }],
    });
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Describe Kyoto for a first-time visitor",
    });
    const task = await t.waitForTask(created.body.task_id as string);
    expect(task.error ?? null).toBeNull();
    expect(task).toMatchObject({ status: "completed", final_answer: "Kyoto has temples." });
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["plan"]);
  });

  it("measures the next prompt against a smaller context at once, after the server refused one for its context", async () => {
    // The worker remembers 32,768 tokens; the server was restarted with 1,024 and refuses.
    t.llm.listings = { "/props": { default_generation_settings: { n_ctx: 1024 }, total_slots: 1 } };
    t.llm.on("plan", {
      fault: "status",
      status: 400,
      code: "context_length_exceeded",
      message: "the request exceeds the available context size",
    });
    const refused = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto" });
    const first = await t.waitForTask(refused.body.task_id as string);
    expect(first.status).toBe("failed");
    expect(first.error).toContain("does not fit the model's context");
    const asked = t.llm.requests.length;
    expect(asked).toBeGreaterThan(0);
    // The refusal re-read the server: the next task is measured against 1,024 and sends nothing.
    const next = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto" });
    const second = await t.waitForTask(next.body.task_id as string);
    expect(second.status).toBe("failed");
    expect(second.error).toContain("context of 1,024 tokens (as the server says)");
    expect(t.llm.requests.length).toBe(asked);
  });

  it("sends a prompt whose estimate does not fit but whose count by the server's tokenizer does", async () => {
    // The plan prompt is some 3,100 tokens by the estimate: 3,300 leaves too little room by it.
    t.llm.listings = { "/props": { default_generation_settings: { n_ctx: 3300 }, total_slots: 1 } };
    // llama.cpp's /tokenize, at 4 characters a token (a real tokenizer's rate for English).
    t.llm.tokenize = (text) => Math.ceil(text.length / 4);
    t.llm.on("plan", {
      reasoning: "one step",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "Kyoto has temples." } }],
    });
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Describe Kyoto for a first-time visitor",
    });
    const task = await t.waitForTask(created.body.task_id as string);
    expect(task.error ?? null).toBeNull();
    expect(task.status).toBe("completed");
    const [plan] = t.llm.requests;
    expect(plan?.schemaName).toBe("plan");
    // The answer's limit is the room the counted prompt leaves: more than the estimate's 256.
    const chars = plan!.messages.reduce((n, m) => n + m.content.length, 0);
    const limit = Number(plan!.body.max_tokens ?? plan!.body.max_completion_tokens);
    expect(limit).toBeGreaterThan(256);
    expect(limit).toBeLessThanOrEqual(3300 - Math.ceil(chars / 4));
  });

  it("fails a prompt the server's count does not fit either, saying it was counted", async () => {
    t.llm.listings = { "/props": { default_generation_settings: { n_ctx: 2000 }, total_slots: 1 } };
    t.llm.tokenize = (text) => Math.ceil(text.length / 4);
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Describe Kyoto for a first-time visitor",
    });
    const task = await t.waitForTask(created.body.task_id as string);
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/^the plan prompt is [\d,]+ tokens as the server counts them/);
    expect(task.error).toContain("context of 2,000 tokens (as the server says)");
    expect(t.llm.requests).toHaveLength(0);
  });
});
