/**
 * Evaluation over HTTP (`evaluate: true`): the judge rejects the first answer, a
 * new attempt is forked with its suggestion, and the better branch is promoted;
 * the task is never seen terminal before that choice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;

/** A JSON answer of the API; the assertions check its shape. */
type Json = Record<string, any>;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stop();
});

const answerPlan = (text: string) => [
  {
    seq_no: 0,
    type: "calling",
    parameters: { tool_name: "llm_generate", tool_params: { prompt: text }, output_vars: ["a"] },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${a}" } },
];

describe("evaluation", () => {
  it("rejects once, forks with the judge's suggestion and promotes the better branch", async () => {
    t.llm.on("plan", { reasoning: "one line", plan: answerPlan("Describe Paris.") });
    t.llm.on("plan_update", {
      reasoning: "mention the river",
      resume_at: 0,
      plan: answerPlan("Describe Paris and the Seine."),
    });
    t.llm.on("text", (r) =>
      r.messages.at(-1)!.content.includes("Seine") ? "Paris, on the Seine." : "Paris.",
    );
    t.llm.queue(
      "evaluation",
      { accept: false, score: 3, suggestion: "Mention the river.", explanation: "too short" },
      { accept: true, score: 8, suggestion: "", explanation: "good" },
    );

    const created = await t.api("POST", "/v1/tasks", { goal: "Describe Paris.", evaluate: true });
    const taskId = created.body.task_id;
    const seen: Array<[string, string]> = [];
    let task: Json;
    for (;;) {
      task = (await t.api("GET", `/v1/tasks/${taskId}`)).body;
      seen.push([task.status, task.branch]);
      if (["completed", "failed", "cancelled"].includes(task.status)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(task).toMatchObject({
      status: "completed",
      branch: "eval-1",
      final_answer: "Paris, on the Seine.",
    });
    // The task was never reported finished with the rejected answer.
    expect(seen.filter(([status]) => status === "completed")).toEqual([["completed", "eval-1"]]);

    const { body: mainLog } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
    const verdict = mainLog.commits[0];
    expect(verdict).toMatchObject({
      type: "evaluation",
      details: { verdict: { accept: false, score: 3, suggestion: "Mention the river." } },
    });
    expect(verdict.llm_calls.map((c: { purpose: string }) => c.purpose)).toEqual(["evaluation"]);
    const { body: main } = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
    expect(main).toMatchObject({ status: "completed", final_answer: "Paris." });

    const { body: evalLog } = await t.api("GET", `/v1/tasks/${taskId}/branches/eval-1/commits`);
    expect(
      evalLog.commits.map((c: { type: string; branch: string }) => `${c.branch}:${c.type}`),
    ).toEqual([
      "eval-1:evaluation",
      "eval-1:step",
      "eval-1:step",
      "eval-1:plan_update",
      "main:plan",
    ]);
    expect(evalLog.commits[0].details.verdict).toMatchObject({ accept: true, score: 8 });
    const update = t.llm.requests.find((r) => r.schemaName === "plan_update")!;
    expect(update.messages.at(-1)!.content).toContain("Mention the river.");
    const judge = t.llm.requests.filter((r) => r.schemaName === "evaluation");
    expect(judge).toHaveLength(2);
    expect(judge[0]!.messages.at(-1)!.content).toContain("Paris.");
  });
});
