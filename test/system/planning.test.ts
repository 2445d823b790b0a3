/**
 * From goal to answer over HTTP against the local stack, with the scripted LLM:
 * planning, the response language, plan updates after a failed step, and the
 * planner's validation repair rounds.
 */
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/llm-server";
import { useTestStack } from "../support/stack";

/** A JSON answer of the API; the assertions check its shape. */
type Json = Record<string, any>;

const t = useTestStack();

const prompt = (r: RecordedRequest) => r.messages.map((m) => m.content).join("\n");
const requestsFor = (schema: string) => t.llm.requests.filter((r) => r.schemaName === schema);

async function commitsOf(taskId: string, branch = "main") {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/${branch}/commits?limit=100`);
  return (body.commits as Json[]).reverse();
}

async function run(body: Record<string, unknown>) {
  const created = await t.api("POST", "/v1/tasks", body);
  expect(created.status).toBe(202);
  return {
    taskId: created.body.task_id as string,
    task: await t.waitForTask(created.body.task_id),
  };
}

const generate = (seq: number, text: string, out: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt: text }, output_vars: [out] },
});

describe("planning", () => {
  it("plans a goal, runs the steps and answers in the language asked for", async () => {
    t.llm.on("plan", {
      reasoning: "gather facts, then write the answer",
      plan: [
        generate(0, "List three facts about Kyoto.", "facts"),
        generate(1, "Write a short visitor's answer from these facts: ${facts}", "answer"),
        { seq_no: 2, type: "assign", parameters: { final_answer: "${answer}" } },
      ],
    });
    t.llm.on("text", (r) =>
      prompt(r).includes("three facts") ? "temples; maple; tea" : "京都へようこそ",
    );

    const { taskId, task } = await run({ goal: "Describe Kyoto for a visitor. (Lang: Japanese)" });
    expect(task).toMatchObject({
      status: "completed",
      final_answer: "京都へようこそ",
      goal: "Describe Kyoto for a visitor. (Lang: Japanese)",
      response_format: { lang: "Japanese" },
    });

    const planner = requestsFor("plan");
    expect(planner).toHaveLength(1);
    expect(prompt(planner[0]!)).toContain("The task's goal: Describe Kyoto for a visitor.");
    expect(prompt(planner[0]!)).toContain("in Japanese");
    expect(prompt(planner[0]!)).toContain("llm_generate");
    const finalStep = requestsFor("text").find((r) => prompt(r).includes("visitor's answer"))!;
    expect(finalStep.messages[0]!.content).toContain("Write your answer in Japanese.");

    const commits = await commitsOf(taskId);
    expect(commits.map((c) => [c.type, c.seq_no])).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
      ["step", 2],
    ]);
    expect(commits[0]!.details.reasoning).toBe("gather facts, then write the answer");
    expect(commits[0]!.llm_calls.map((c: { purpose: string }) => c.purpose)).toEqual(["plan"]);
    expect(task.usage).toMatchObject({ steps: 3, llm_calls: 3 });
  });

  it("updates the plan after a failing tool step and goes on to succeed", async () => {
    t.llm.on("plan", {
      reasoning: "fetch the data",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "http_request",
            tool_params: { url: "https://data.example.com/rates" },
            output_vars: ["rates"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${rates}" } },
      ],
    });
    t.llm.on("plan_update", {
      reasoning: "the host is not allowed: answer from the model instead",
      resume_at: 0,
      plan: [
        generate(0, "Give typical exchange rates.", "rates"),
        { seq_no: 1, type: "assign", parameters: { final_answer: "${rates}" } },
      ],
    });
    t.llm.on("text", "1 EUR = 1.1 USD");

    const { taskId, task } = await run({ goal: "Find today's exchange rates." });
    expect(task).toMatchObject({ status: "completed", final_answer: "1 EUR = 1.1 USD" });
    const commits = await commitsOf(taskId);
    expect(commits.map((c) => c.type)).toEqual(["plan", "error", "plan_update", "step", "step"]);
    expect(commits[1]).toMatchObject({ seq_no: 0, error: { code: "host_not_allowed" } });
    expect(commits[2]).toMatchObject({ pc_after: 0, inputs: { reason: "error" } });

    const update = prompt(requestsFor("plan_update")[0]!);
    expect(update).toContain("The instruction at seq_no 0 failed: [host_not_allowed]");
    expect(update).toContain("https://data.example.com/rates");
    expect(update).toContain("Find today's exchange rates.");
  });

  it("repairs a plan that fails validation twice on the third answer", async () => {
    const good = {
      reasoning: "fixed",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }],
    };
    t.llm.queue(
      "plan",
      {
        reasoning: "uses a tool that does not exist",
        plan: [
          {
            seq_no: 0,
            type: "calling",
            parameters: { tool_name: "send_fax", tool_params: {}, output_vars: ["x"] },
          },
          { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
        ],
      },
      { reasoning: "never answers", plan: [{ seq_no: 0, type: "assign", parameters: { y: 1 } }] },
      good,
    );

    const { taskId, task } = await run({ goal: "Say done." });
    expect(task).toMatchObject({ status: "completed", final_answer: "done" });
    const planner = requestsFor("plan");
    expect(planner).toHaveLength(3);
    expect(prompt(planner[1]!)).toContain("send_fax");
    expect(prompt(planner[1]!)).toContain("That plan fails validation");
    expect(prompt(planner[2]!)).toContain("final_answer");
    const [plan] = await commitsOf(taskId);
    expect(plan!.details).toMatchObject({ attempts: 3 });
    expect(plan!.details.repaired_problems).toHaveLength(2);
    expect(plan!.llm_calls).toHaveLength(3);
  });

  it("fails a goal that cannot be planned with the planner's last problems", async () => {
    t.llm.on("plan", { reasoning: "no", plan: [{ seq_no: 0, type: "assign", parameters: {} }] });
    const { task } = await run({ goal: "Do the impossible." });
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/still fails validation after 3 attempts/);
    expect(requestsFor("plan")).toHaveLength(3);
  });
});
