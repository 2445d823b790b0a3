/**
 * A local server whose context cannot hold the plan prompt, through the local
 * stack: the worker reads the context from llama.cpp's `/props` (as the scripted
 * server lists it), sends nothing the server would refuse, and fails the task at
 * once with `llm_context_exceeded` and the setting to change; nothing is left
 * running. Its own file: the worker remembers a server's context for minutes.
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
});
