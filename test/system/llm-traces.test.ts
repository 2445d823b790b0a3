/**
 * LLM traces through the local stack with the scripted LLM: every call's
 * messages and answer read back at `/v1/tasks/{id}/commits/{commit}/llm-calls/{n}`,
 * exactly as the server received and sent them but with secrets redacted; the
 * rejected plans of a `plan_invalid` failure; 404s that say what is missing,
 * also for a second tenant; and no traces at all with a retention of 0 days.
 */
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, useTestStack } from "../support/stack";

/** A JSON answer of the API; the assertions check its shape. */
type Json = Record<string, any>;

const t = useTestStack();

const TOKEN = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.signature";
/** What a trace keeps of a text that held the token. */
const redacted = (text: string) => text.replaceAll(`Bearer ${TOKEN}`, "Bearer [redacted]");

const planAnswer = {
  reasoning: "ask the model, then answer",
  plan: [
    {
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: `Name a temple. Our header is Authorization: Bearer ${TOKEN}` },
        output_vars: ["temple"],
      },
    },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${temple}" } },
  ],
};

async function commitsOf(taskId: string, key?: string): Promise<Json[]> {
  const { body } = await t.api(
    "GET",
    `/v1/tasks/${taskId}/branches/main/commits?limit=100`,
    undefined,
    key ? { key } : {},
  );
  return (body.commits as Json[]).reverse();
}

async function run(goal: string) {
  const created = await t.api("POST", "/v1/tasks", { goal });
  expect(created.status).toBe(202);
  const taskId = created.body.task_id as string;
  return { taskId, task: await t.waitForTask(taskId), commits: await commitsOf(taskId) };
}

const callPath = (taskId: string, commitId: string, n: number | string) =>
  `/v1/tasks/${taskId}/commits/${commitId}/llm-calls/${n}`;

describe("LLM traces", () => {
  it("reads each call's messages and answer as the LLM server got and gave them", async () => {
    t.llm.on("plan", planAnswer);
    t.llm.on("text", "Kinkaku-ji");
    const { taskId, task, commits } = await run("Name a temple in Kyoto.");
    expect(task.status).toBe("completed");
    const [planCommit, step] = commits;
    expect(planCommit!.llm_calls[0].trace).toMatch(/^[0-9a-f]{64}$/);

    const plan = await t.api("GET", callPath(taskId, planCommit!.commit_id, 0));
    expect(plan.status).toBe(200);
    const sentPlan = t.llm.requests.find((r) => r.schemaName === "plan")!;
    expect(plan.body).toMatchObject({
      commit_id: planCommit!.commit_id,
      n: 0,
      purpose: "plan",
      model: "scripted-model",
      request: {
        model: "scripted-model",
        messages: sentPlan.messages.map((m) => ({ ...m, content: redacted(m.content) })),
        response_format: { type: "json_schema", json_schema: { name: "plan" } },
      },
      response: {
        text: redacted(JSON.stringify(planAnswer)),
        json: JSON.parse(redacted(JSON.stringify(planAnswer))),
        finish_reason: "stop",
      },
      repair_round: 0,
      attempts: [{ attempt: 1 }],
    });

    const generate = await t.api("GET", callPath(taskId, step!.commit_id, 0));
    expect(generate.status).toBe(200);
    const sentText = t.llm.requests.find((r) => r.schemaName === "text")!;
    // The server got the token; the trace keeps the conversation without it.
    expect(JSON.stringify(sentText.messages)).toContain(TOKEN);
    expect(JSON.stringify(generate.body)).not.toContain(TOKEN);
    expect(generate.body.request.messages).toEqual(
      sentText.messages.map((m) => ({ ...m, content: redacted(m.content) })),
    );
    expect(generate.body.response).toEqual({ text: "Kinkaku-ji", finish_reason: "stop" });
    expect(generate.body.request.response_format).toBeUndefined();
  });

  it("answers 404 saying what is missing, and 400 for an n that is no number", async () => {
    t.llm.on("plan", planAnswer);
    t.llm.on("text", "Kinkaku-ji");
    const { taskId, commits } = await run("Name a temple.");
    const [planCommit, , last] = commits;

    const beyond = await t.api("GET", callPath(taskId, planCommit!.commit_id, 1));
    expect(beyond.status).toBe(404);
    expect(beyond.body.error.message).toBe(
      `commit ${planCommit!.commit_id} made 1 LLM call(s): n goes from 0 to 0`,
    );
    const none = await t.api("GET", callPath(taskId, last!.commit_id, 0));
    expect(none.status).toBe(404);
    expect(none.body.error.message).toBe(`commit ${last!.commit_id} made no LLM calls`);
    const commit = await t.api("GET", callPath(taskId, "nope-3", 0));
    expect(commit.status).toBe(404);
    expect(commit.body.error.message).toBe("commit 'nope-3' does not exist");
    const bad = await t.api("GET", callPath(taskId, planCommit!.commit_id, "first"));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("n is the call's place in the commit's llm_calls");

    const stranger = await t.api(
      "POST",
      "/v1/admin/tenants/stranger-traces/keys",
      { name: "b" },
      { key: ADMIN_KEY },
    );
    const theirs = await t.api("GET", callPath(taskId, planCommit!.commit_id, 0), undefined, {
      key: stranger.body.key,
    });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.message).toBe(`task '${taskId}' does not exist`);
  });

  it("keeps each rejected plan of a plan_invalid failure with its problems and its call", async () => {
    const plans = [1, 2, 3].map((n) => ({
      reasoning: `attempt ${n}`,
      plan: [{ seq_no: 0, type: "assign", parameters: { [`x${n}`]: n } }],
    }));
    t.llm.queue("plan", ...plans);
    const { taskId, task, commits } = await run("Do the impossible.");
    expect(task.status).toBe("failed");
    const [error] = commits;
    expect(error!.type).toBe("error");
    expect(error!.error.code).toBe("plan_invalid");
    const attempts = error!.details.error_details.attempts as Json[];
    expect(attempts.map((a) => [a.attempt, a.llm_call, a.plan])).toEqual(
      plans.map((p, i) => [i + 1, i, p.plan]),
    );
    for (const a of attempts) expect(a.problems.length).toBeGreaterThan(0);

    const second = await t.api("GET", callPath(taskId, error!.commit_id, 1));
    expect(second.status).toBe(200);
    expect(second.body.response.json).toEqual(plans[1]);
    expect(second.body.request.messages.at(-1).content).toContain("That plan fails validation");
  });
});

describe("LLM traces turned off", () => {
  it("keeps none with a retention of 0 days and says so", async () => {
    const off = await startTestStack({ env: { STACKVM_LLM_TRACE_RETENTION_DAYS: "0" } });
    try {
      off.llm.on("plan", planAnswer);
      off.llm.on("text", "Kinkaku-ji");
      const created = await off.api("POST", "/v1/tasks", { goal: "Name a temple." });
      await off.waitForTask(created.body.task_id);
      const { body } = await off.api(
        "GET",
        `/v1/tasks/${created.body.task_id}/branches/main/commits`,
      );
      const planCommit = (body.commits as Json[]).at(-1)!;
      expect(planCommit.llm_calls[0].trace).toBeUndefined();
      const read = await off.api("GET", callPath(created.body.task_id, planCommit.commit_id, 0));
      expect(read.status).toBe(404);
      expect(read.body.error.message).toContain("STACKVM_LLM_TRACE_RETENTION_DAYS=0");
    } finally {
      await off.stop();
    }
  });
});
