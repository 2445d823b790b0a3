/**
 * Branches as a product over HTTP: a fork with a suggestion shares the commits
 * before the fork point (no LLM call repeated) and diverges after; the diff of
 * two heads; promote; delete keeps shared commits; cancel in the middle of a
 * long plan.
 */
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/llm-server";
import { useTestStack } from "../support/stack";

/** A JSON answer of the API; the assertions check its shape. */
type Json = Record<string, any>;

const t = useTestStack();

const lastMessage = (r: RecordedRequest) => r.messages.at(-1)?.content ?? "";
const textCalls = (word: string) =>
  t.llm.requests.filter((r) => r.schemaName === "text" && lastMessage(r).includes(word)).length;

async function commitsOf(taskId: string, branch: string): Promise<Json[]> {
  const { status, body } = await t.api(
    "GET",
    `/v1/tasks/${taskId}/branches/${branch}/commits?limit=100`,
  );
  expect(status).toBe(200);
  return body.commits.reverse();
}

async function waitForBranch(taskId: string, branch: string) {
  for (let i = 0; i < 600; i++) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/${branch}`);
    if (["completed", "failed", "cancelled"].includes(body.status)) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`branch ${branch} did not finish`);
}

const generate = (seq: number, text: string, out: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt: text }, output_vars: [out] },
});

const PLAN = [
  generate(0, "Step A", "a"),
  generate(1, "Step B after ${a}", "b"),
  generate(2, "Step C after ${b}", "c"),
  { seq_no: 3, type: "assign", parameters: { final_answer: "${c}" } },
];

describe("branches", () => {
  it("forks at a commit with a suggestion, shares what came before, diffs, promotes and deletes", async () => {
    t.llm.on("plan", { reasoning: "A, B, C", plan: PLAN });
    t.llm.on("text", (r) => `result ${/Step (\w)/.exec(lastMessage(r))?.[1] ?? "?"}`);
    t.llm.on("plan_update", {
      reasoning: "D instead of C",
      resume_at: 2,
      plan: [...PLAN.slice(0, 2), generate(2, "Step D after ${b}", "c"), PLAN[3]],
    });
    const created = await t.api("POST", "/v1/tasks", { goal: "Run the steps." });
    const taskId = created.body.task_id;
    expect((await t.waitForTask(taskId)).final_answer).toBe("result C");
    const main = await commitsOf(taskId, "main");
    expect(main.map((c) => c.seq_no)).toEqual([null, 0, 1, 2, 3]);

    // Fork at the commit after step B (k = 2): the planner rewrites from its PC.
    const k = main[2]!.commit_id;
    const fork = await t.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: k,
      name: "use-d",
      suggestion: "Use step D instead of step C.",
    });
    expect(fork.status).toBe(202);
    expect(fork.body).toMatchObject({
      name: "use-d",
      forked_from: { branch: "main", commit_id: k },
    });
    const forked = await waitForBranch(taskId, "use-d");
    expect(forked).toMatchObject({ status: "completed", final_answer: "result D" });

    // No LLM call before the fork point ran again; one planner call, one new step.
    expect([textCalls("Step A"), textCalls("Step B"), textCalls("Step C")]).toEqual([1, 1, 1]);
    expect(textCalls("Step D")).toBe(1);
    const update = t.llm.requests.filter((r) => r.schemaName === "plan_update");
    expect(update).toHaveLength(1);
    expect(lastMessage(update[0]!)).toContain("Use step D instead of step C.");

    const own = await commitsOf(taskId, "use-d");
    expect(own.slice(0, 3).map((c) => c.commit_id)).toEqual(
      main.slice(0, 3).map((c) => c.commit_id),
    );
    expect(own.slice(3).map((c) => [c.branch, c.type, c.seq_no])).toEqual([
      ["use-d", "plan_update", 2],
      ["use-d", "step", 2],
      ["use-d", "step", 3],
    ]);

    const diff = await t.api(
      "GET",
      `/v1/tasks/${taskId}/commits/${forked.head}/diff?against=${main.at(-1)!.commit_id}`,
    );
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({
      added: {},
      removed: {},
      changed: {
        c: { from: "result C", to: "result D" },
        final_answer: { from: "result C", to: "result D" },
      },
      plan_changed: true,
    });

    const promoted = await t.api("POST", `/v1/tasks/${taskId}/branches/use-d/promote`);
    expect(promoted.body).toMatchObject({
      branch: "use-d",
      status: "completed",
      final_answer: "result D",
    });
    const refused = await t.api("DELETE", `/v1/tasks/${taskId}/branches/use-d`);
    expect(refused.status).toBe(409);

    expect((await t.api("DELETE", `/v1/tasks/${taskId}/branches/main`)).status).toBe(204);
    expect((await t.api("GET", `/v1/tasks/${taskId}/branches/main`)).status).toBe(404);
    for (const shared of main.slice(0, 3)) {
      expect((await t.api("GET", `/v1/tasks/${taskId}/commits/${shared.commit_id}`)).status).toBe(
        200,
      );
    }
    for (const gone of main.slice(3)) {
      expect((await t.api("GET", `/v1/tasks/${taskId}/commits/${gone.commit_id}`)).status).toBe(
        404,
      );
    }
    expect((await commitsOf(taskId, "use-d")).map((c) => c.commit_id)).toEqual(
      own.map((c) => c.commit_id),
    );
    const task = await t.api("GET", `/v1/tasks/${taskId}`);
    expect(task.body.usage.llm_calls).toBe(6);
  });

  it("re-executes from a commit, running only the steps after it", async () => {
    t.llm.on("plan", { reasoning: "A, B, C", plan: PLAN });
    t.llm.on("text", (r) => `again ${/Step (\w)/.exec(lastMessage(r))?.[1] ?? "?"}`);
    const created = await t.api("POST", "/v1/tasks", { goal: "Run the steps again." });
    const taskId = created.body.task_id;
    await t.waitForTask(taskId);
    const main = await commitsOf(taskId, "main");
    const fork = await t.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: main[2]!.commit_id,
    });
    expect(fork.body.name).toMatch(/^fork-/);
    expect(await waitForBranch(taskId, fork.body.name)).toMatchObject({ status: "completed" });
    expect([textCalls("Step A"), textCalls("Step B"), textCalls("Step C")]).toEqual([1, 1, 2]);
  });

  it("cancels a long plan in the middle: the branch stops with a cancel commit", async () => {
    t.llm.on("plan", {
      reasoning: "count until the model says stop",
      plan: [
        { seq_no: 0, type: "assign", parameters: { i: 0 } },
        { seq_no: 1, type: "assign", parameters: { i: "${i} + 1" } },
        {
          seq_no: 2,
          type: "jmp",
          parameters: {
            condition_prompt: "Is ${i} at least 1000?",
            jump_if_true: 3,
            jump_if_false: 1,
          },
        },
        { seq_no: 3, type: "assign", parameters: { final_answer: "${i}" } },
      ],
    });
    t.llm.on("jmp_condition", { result: false, explanation: "not yet" });
    const created = await t.api("POST", "/v1/tasks", { goal: "Count for a long time." });
    const taskId = created.body.task_id;
    for (let i = 0; i < 600; i++) {
      if ((await commitsOf(taskId, "main")).length >= 6) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const cancel = await t.api("POST", `/v1/tasks/${taskId}/cancel`);
    expect(cancel.status).toBe(200);
    const task = await t.waitForTask(taskId);
    expect(task.status).toBe("cancelled");
    const commits = await commitsOf(taskId, "main");
    expect(commits.at(-1)).toMatchObject({ type: "cancel", branch: "main" });
    expect(commits.filter((c) => c.type === "cancel")).toHaveLength(1);
    expect(commits.length).toBeGreaterThanOrEqual(7);
    expect(commits.length).toBeLessThan(200);
    const state = await t.api(
      "GET",
      `/v1/tasks/${taskId}/commits/${commits.at(-1)!.commit_id}/state`,
    );
    expect(state.body.variables.i).toBeGreaterThanOrEqual(1);
    expect(state.body.completed).toBe(false);
  });
});
