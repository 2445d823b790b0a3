/**
 * Adaptive planning (issue 43): with `"planning": "adaptive"` the planner writes
 * the next instruction or few, sees their results, and writes more, each time a
 * plan-update commit, until it sets final_answer. A task whose second tool call
 * depends on its first result completes, and a fork at its third step reuses
 * the steps before it.
 */
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/llm-server";
import { useTestStack } from "../support/stack";

const t = useTestStack();

type Commit = Record<string, any>;

const generate = (seq_no: number, prompt: string, out: string) => ({
  seq_no,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: [out] },
});
const FIRST = generate(0, "Decode the code word K-Y-T.", "city");
const SECOND = generate(1, "Name one temple in ${city}.", "temple");
const THIRD = { seq_no: 2, type: "assign", parameters: { final_answer: "${temple}" } };

const asked = (r: RecordedRequest, text: string) =>
  r.schemaName === "text" && r.messages.at(-1)!.content.includes(text);

async function commitsOf(taskId: string, branch: string): Promise<Commit[]> {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/${branch}/commits?limit=50`);
  return (body.commits as Commit[]).slice().reverse();
}

async function waitForBranch(taskId: string, name: string): Promise<Commit> {
  for (let i = 0; i < 600; i++) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/${name}`);
    if (["completed", "failed", "cancelled"].includes(body.status)) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`branch ${name} did not finish`);
}

describe("an adaptive task", () => {
  it("completes a goal whose next tool call needs the last result, one plan update per result, and forks at its third step", async () => {
    const put = await t.api("PUT", "/v1/namespaces/explore", {
      allowed_tools: ["llm_generate"],
      planning: "adaptive",
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.planning).toBe("adaptive");

    t.llm.on((r) => asked(r, "Decode the code word"), "Kyoto");
    t.llm.on((r) => asked(r, "Name one temple in Kyoto."), "Kinkaku-ji");
    // The first plan ends before final_answer: it cannot know the city yet.
    t.llm.queue("plan", { reasoning: "decode first", plan: [FIRST] });
    t.llm.queue(
      "plan_update",
      { reasoning: "now the temple", plan: [FIRST, SECOND], resume_at: 1 },
      { reasoning: "answer", plan: [FIRST, SECOND, THIRD], resume_at: 2 },
    );
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Decode K-Y-T and name a temple there.",
      namespace: "explore",
    });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id as string;
    const task = await t.waitForTask(taskId);
    expect(task.status, JSON.stringify(task.error)).toBe("completed");
    expect(task.final_answer).toBe("Kinkaku-ji");

    const main = await commitsOf(taskId, "main");
    expect(main.map((c) => [c.type, c.seq_no])).toEqual([
      ["plan", null],
      ["step", 0],
      ["plan_update", null],
      ["step", 1],
      ["plan_update", null],
      ["step", 2],
    ]);
    // Each planning call saw what the steps so far produced, and was asked for the next step.
    const updates = t.llm.requests.filter((r) => r.schemaName === "plan_update");
    expect(updates).toHaveLength(2);
    expect(updates[0]!.messages.at(-1)!.content).toContain("city = Kyoto");
    expect(updates[0]!.messages[0]!.content).toContain("This task is planned adaptively");
    expect(updates[1]!.messages.at(-1)!.content).toContain("temple = Kinkaku-ji");
    const plan = t.llm.requests.find((r) => r.schemaName === "plan")!;
    expect(plan.messages[0]!.content).toContain("write only the first instruction or few");
    // Adaptive updates are no repairs: the error budget of plan updates is untouched.
    expect(main.every((c) => c.type !== "error")).toBe(true);

    // Fork at the third step: the planner writes it anew, the steps before it are reused.
    const before = t.llm.requests.length;
    t.llm.queue("plan_update", {
      reasoning: "with the city",
      plan: [
        FIRST,
        SECOND,
        { seq_no: 2, type: "assign", parameters: { final_answer: "${temple} in ${city}" } },
      ],
      resume_at: 2,
    });
    const fork = await t.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: main[4]!.commit_id,
      name: "with-city",
      suggestion: "Name the city too.",
    });
    expect(fork.status, JSON.stringify(fork.body)).toBe(202);
    const forked = await waitForBranch(taskId, "with-city");
    expect(forked).toMatchObject({ status: "completed", final_answer: "Kinkaku-ji in Kyoto" });
    const again = t.llm.requests.slice(before);
    expect(again.map((r) => r.schemaName)).toEqual(["plan_update"]);
    const own = await commitsOf(taskId, "with-city");
    expect(own.slice(0, 5).map((c) => c.commit_id)).toEqual(
      main.slice(0, 5).map((c) => c.commit_id),
    );
    expect(own.slice(5).map((c) => [c.type, c.seq_no])).toEqual([
      ["plan_update", 2],
      ["step", 2],
    ]);
  });

  it("stops a planner that never sets final_answer at the task's step budget", async () => {
    t.llm.on("text", "more");
    t.llm.queue("plan", { reasoning: "start", plan: [FIRST] });
    const again = generate(1, "Look once more.", "more");
    t.llm.on("plan_update", { reasoning: "not yet", plan: [FIRST, again], resume_at: 1 });
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Never finish.",
      namespace: "explore",
      budget: { max_steps: 6 },
    });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status).toBe("failed");
    expect(task.error).toContain("max_steps budget spent");
    const updates = t.llm.requests.filter((r) => r.schemaName === "plan_update");
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.length).toBeLessThanOrEqual(6);
  });

  it("takes planning on the task over its namespace's", async () => {
    t.llm.on((r) => asked(r, "Decode the code word"), "Kyoto");
    t.llm.queue("plan", { reasoning: "decode first", plan: [FIRST] });
    t.llm.queue("plan_update", {
      reasoning: "done",
      plan: [FIRST, { seq_no: 1, type: "assign", parameters: { final_answer: "${city}" } }],
      resume_at: 1,
    });
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Decode K-Y-T.",
      planning: "adaptive",
    });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task.error)).toBe("completed");
    expect(task.final_answer).toBe("Kyoto");
    // The task says how it was planned (its page in the console shows it).
    expect(task.planning).toBe("adaptive");
    // Without adaptive planning the same first plan is refused: it never sets final_answer.
    t.llm.queue("plan", ...[1, 2, 3].map(() => ({ reasoning: "decode first", plan: [FIRST] })));
    const upFront = await t.api("POST", "/v1/tasks", { goal: "Decode K-Y-T." });
    const failed = await t.waitForTask(upFront.body.task_id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain("final_answer");
    expect(failed.planning).toBeUndefined();
  });

  it("runs a plan the client started and the planner continues", async () => {
    t.llm.on((r) => asked(r, "Decode the code word"), "Kyoto");
    t.llm.queue("plan_update", {
      reasoning: "done",
      plan: [FIRST, { seq_no: 1, type: "assign", parameters: { final_answer: "${city}" } }],
      resume_at: 1,
    });
    const created = await t.api("POST", "/v1/tasks", {
      goal: "Decode K-Y-T.",
      plan: [FIRST],
      planning: "adaptive",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task.error)).toBe("completed");
    expect(task.final_answer).toBe("Kyoto");
    expect(t.llm.requests.filter((r) => r.schemaName === "plan")).toHaveLength(0);
    // Up front, the same plan is refused at once: it never sets final_answer.
    const refused = await t.api("POST", "/v1/tasks", { goal: "Decode K-Y-T.", plan: [FIRST] });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("final_answer");
  });

  it("is refused as an unknown planning mode, with what is allowed", async () => {
    const bad = await t.api("POST", "/v1/tasks", { goal: "x", planning: "reactive" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("planning");
  });
});
