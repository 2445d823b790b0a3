/**
 * `stackvm trace TASK COMMIT N` as a process against the local stack: one LLM
 * call's conversation and answer, `--json`, and what it says for a call that
 * does not exist or an N that is no number.
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";
import { runCli } from "./run-cli";

const t = useTestStack();

const cli = (args: string[]) =>
  runCli(args, { STACKVM_URL: t.url, STACKVM_API_KEY: t.apiKey, NO_COLOR: "1" });

const PLAN = {
  reasoning: "one generation",
  plan: [
    {
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: "Name a fruit from Okinawa." },
        output_vars: ["fruit"],
      },
    },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${fruit}" } },
  ],
};

describe("stackvm trace", () => {
  it("prints a call's messages as a conversation and its answer", async () => {
    t.llm.on("plan", PLAN);
    t.llm.on("text", "Shikuwasa");
    const created = await t.api("POST", "/v1/tasks", { goal: "Name a fruit." });
    const taskId = created.body.task_id as string;
    await t.waitForTask(taskId);
    const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
    const step = (body.commits as Array<{ commit_id: string; seq_no: number | null }>).find(
      (c) => c.seq_no === 0,
    )!;
    const sent = t.llm.requests.find((r) => r.schemaName === "text")!;

    const text = await cli(["trace", taskId, step.commit_id, "0"]);
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^llm_generate · scripted-model · \d+ in \/ \d+ out tokens/);
    expect(text.stdout).toContain("asked for free text");
    for (const message of sent.messages) {
      expect(text.stdout).toContain(`── ${message.role} ──\n${message.content}\n`);
    }
    expect(text.stdout).toContain("── answer (finish: stop) ──\nShikuwasa\n");
    expect(text.stdout).toContain("1 attempt");

    const json = await cli(["trace", taskId, step.commit_id, "0", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      purpose: "llm_generate",
      request: { messages: sent.messages },
      response: { text: "Shikuwasa", finish_reason: "stop" },
    });

    const missing = await cli(["trace", taskId, step.commit_id, "3"]);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain(`commit ${step.commit_id} made 1 LLM call(s)`);
    const bad = await cli(["trace", taskId, step.commit_id, "last"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("N must be the call's place in the commit's LLM calls, from 0");
  });
});
