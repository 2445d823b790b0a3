/**
 * The VM through the whole stack: LLM faults, budgets, usage, namespaces and tools,
 * and a plan as the original StackVM wrote them.
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

const generate = (prompt: string, out = "text") => ({
  seq_no: 0,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: [out] },
});
const answer = (seq: number, value: string) => ({
  seq_no: seq,
  type: "assign",
  parameters: { final_answer: value },
});

async function run(body: Record<string, unknown>) {
  const created = await t.api("POST", "/v1/tasks", body);
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return t.waitForTask(created.body.task_id, { timeoutMs: 60_000 });
}

async function commitsOf(taskId: string, branch = "main") {
  const res = await t.api("GET", `/v1/tasks/${taskId}/branches/${branch}/commits?limit=100`);
  return (res.body.commits as Array<Record<string, any>>).reverse();
}

describe("LLM faults through the whole stack", () => {
  it("retries a 429 with Retry-After and writes one commit with one recorded call", async () => {
    t.llm.queue("text", { fault: "429", retryAfter: 1 }, "the answer");
    const task = await run({ plan: [generate("Say it"), answer(1, "${text}")] });
    expect(task).toMatchObject({ status: "completed", final_answer: "the answer" });
    expect(t.llm.requests).toHaveLength(2);
    const commits = await commitsOf(task.task_id);
    const step = commits.find((c) => c.seq_no === 0)!;
    expect(commits.filter((c) => c.seq_no === 0)).toHaveLength(1);
    expect(step.llm_calls).toHaveLength(1);
    expect(step.llm_calls[0]).toMatchObject({ purpose: "llm_generate", attempts: 2 });
  });

  it("retries a call that hangs past the timeout", async () => {
    t.llm.queue("text", { fault: "hang", ms: 3500 }, "after the hang");
    const task = await run({ plan: [generate("Say it"), answer(1, "${text}")] });
    expect(task.final_answer).toBe("after the hang");
    expect(t.llm.requests.length).toBeGreaterThanOrEqual(2);
  });

  it("sends a malformed jmp condition back for repair", async () => {
    t.llm.queue("jmp_condition", "this is not json", { result: true, explanation: "yes" });
    const task = await run({
      plan: [
        {
          seq_no: 0,
          type: "jmp",
          parameters: { condition_prompt: "Is it so?", jump_if_true: 1, jump_if_false: 2 },
        },
        answer(1, "true branch"),
        answer(2, "false branch"),
      ],
    });
    expect(task.final_answer).toBe("true branch");
    const jmp = (await commitsOf(task.task_id)).find((c) => c.seq_no === 0)!;
    expect(jmp.details).toMatchObject({ condition: true, explanation: "yes" });
    expect(jmp.llm_calls).toHaveLength(2);
    expect(t.llm.requests[0]!.schemaName).toBe("jmp_condition");
  });

  it("fails the branch with a clear error when the token budget is spent", async () => {
    t.llm.on("text", "x".repeat(400));
    const task = await run({
      // The second call reads the first's output, so it runs after it: two
      // independent calls would form a parallel group and start together.
      plan: [generate("one", "a"), { ...generate("two ${a}", "b"), seq_no: 1 }, answer(2, "${b}")],
      budget: { max_steps: 50, max_tokens: 60 },
    });
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/max_tokens budget spent/);
    expect(t.llm.requests).toHaveLength(1);
  });

  it("records each call's tokens in its commit and sums them into the task's usage", async () => {
    t.llm.on("text", "twelve chars");
    const task = await run({
      plan: [generate("first", "a"), { ...generate("second", "b"), seq_no: 1 }, answer(2, "${a}")],
    });
    const calls = (await commitsOf(task.task_id)).flatMap((c) => c.llm_calls);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.output_tokens === 3 && c.input_tokens > 0)).toBe(true);
    expect(task.usage).toMatchObject({
      llm_calls: 2,
      input_tokens: calls[0].input_tokens + calls[1].input_tokens,
      output_tokens: 6,
      // Three instructions ran; the plan commit is not a step.
      steps: 3,
    });
  });
});

describe("namespaces and tools", () => {
  it("lists the built-in tools with their JSON Schemas", async () => {
    const res = await t.api("GET", "/v1/tools");
    expect(res.status).toBe(200);
    const names = res.body.tools.map((x: { name: string }) => x.name);
    expect(names).toEqual(expect.arrayContaining(["llm_generate", "http_request"]));
    const llm = res.body.tools.find((x: { name: string }) => x.name === "llm_generate");
    expect(llm.input_schema.required).toContain("prompt");
  });

  it("creates, reads, lists and deletes a namespace, and refuses unknown tools", async () => {
    const put = await t.api("PUT", "/v1/namespaces/research", {
      allowed_tools: ["llm_generate"],
      allowed_hosts: ["api.example.com"],
      description: "research only",
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: "research", allowed_tools: ["llm_generate"] });
    expect((await t.api("GET", "/v1/namespaces/research")).body.allowed_hosts).toEqual([
      "api.example.com",
    ]);
    const list = await t.api("GET", "/v1/namespaces");
    expect(list.body.namespaces.map((n: { name: string }) => n.name)).toEqual(
      expect.arrayContaining(["default", "research"]),
    );
    const bad = await t.api("PUT", "/v1/namespaces/bad", { allowed_tools: ["rm_rf"] });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("unknown_tool");
    const url = await t.api("PUT", "/v1/namespaces/bad", { allowed_hosts: ["https://x.com/a"] });
    expect(url.status).toBe(400);
    expect(url.body.error.message).toMatch(/without scheme or path/);
    const limited = await t.api("PUT", "/v1/namespaces/small", {
      sandbox_limits: { time_ms: 2000 },
    });
    expect(limited.body.sandbox_limits).toEqual({ time_ms: 2000 });
    expect((await t.api("DELETE", "/v1/namespaces/research")).status).toBe(204);
    expect((await t.api("GET", "/v1/namespaces/research")).status).toBe(404);
  });

  it("refuses at validation a plan that calls a tool its namespace does not allow", async () => {
    await t.api("PUT", "/v1/namespaces/textonly", { allowed_tools: ["llm_generate"] });
    const res = await t.api("POST", "/v1/tasks", {
      namespace: "textonly",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "http_request",
            tool_params: { url: "https://example.com" },
            output_vars: ["page"],
          },
        },
        answer(1, "${page}"),
      ],
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.error.details.problems)).toMatch(/http_request/);
  });

  it("refuses a forked step that calls a tool the namespace does not allow", async () => {
    await t.api("PUT", "/v1/namespaces/shrinking", { allowed_tools: ["llm_generate"] });
    t.llm.on("text", "x");
    const created = await t.api("POST", "/v1/tasks", {
      namespace: "shrinking",
      plan: [generate("a"), answer(1, "${text}")],
    });
    // Reach the tool another way: replace a step on a fork.
    const task = await t.waitForTask(created.body.task_id);
    const commits = await commitsOf(task.task_id);
    const fork = await t.api("POST", `/v1/tasks/${task.task_id}/branches`, {
      from_commit: commits[0]!.commit_id,
      name: "sneaky",
      step: {
        seq_no: 0,
        instruction: {
          seq_no: 0,
          type: "calling",
          parameters: { tool_name: "http_request", tool_params: { url: "https://example.com" } },
        },
      },
    });
    expect(fork.status).toBe(422);
    expect(JSON.stringify(fork.body.error.details.problems)).toMatch(/http_request/);
  });

  it("answers 404 for another tenant's namespace as for a missing one", async () => {
    const res = await t.api("GET", "/v1/namespaces/nothing-here");
    expect(res.status).toBe(404);
  });
});

describe("StackVM plans", () => {
  it("runs a plan as the original wrote them, unchanged", async () => {
    t.llm.on("text", (r) =>
      r.messages.at(-1)!.content.includes("summarize") ? "A short summary." : "Raw notes.",
    );
    const task = await run({
      goal: "Summarize what TiDB is",
      plan: [
        {
          seq_no: 0,
          type: "reasoning",
          parameters: {
            chain_of_thoughts: "First gather notes, then summarize them.",
            dependency_analysis: "Step 2 depends on step 1.",
          },
        },
        {
          seq_no: 1,
          type: "calling",
          parameters: {
            tool_name: "llm_generate",
            tool_params: { prompt: "Write notes about TiDB." },
            output_vars: ["notes"],
          },
        },
        {
          seq_no: 2,
          type: "calling",
          parameters: {
            tool_name: "llm_generate",
            tool_params: { prompt: "Please summarize these notes", context: "${notes}" },
            output_vars: ["summary"],
          },
        },
        { seq_no: 3, type: "assign", parameters: { final_answer: "${summary}" } },
      ],
    });
    expect(task).toMatchObject({ status: "completed", final_answer: "A short summary." });
    const reasoning = (await commitsOf(task.task_id)).find((c) => c.seq_no === 0)!;
    expect(reasoning.instruction.parameters.chain_of_thoughts).toMatch(/gather notes/);
  });
});
