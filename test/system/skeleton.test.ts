/**
 * The walking skeleton through the real path: HTTP → DynamoDB (dynalite) → SQS
 * (fauxqs) → the worker's Lambda handler via the poller → commits → HTTP.
 */
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const t = useTestStack();

const multiply = (a: number, b: number) => [
  { seq_no: 0, type: "assign", parameters: { a, b } },
  { seq_no: 1, type: "jmp", parameters: { target_seq: 3 } },
  { seq_no: 2, type: "assign", parameters: { final_answer: "never" } },
  { seq_no: 3, type: "assign", parameters: { final_answer: "${a} * ${b}" } },
];

describe("the walking skeleton", () => {
  it("answers /healthz without a key", async () => {
    const res = await t.api("GET", "/healthz", undefined, { key: null });
    expect(res).toMatchObject({ status: 200, body: { ok: true } });
  });

  it("runs a submitted plan to its final answer, one commit per instruction", async () => {
    const created = await t.api("POST", "/v1/tasks", { plan: multiply(6, 7) });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: "queued", branch: "main" });
    const task = await t.waitForTask(created.body.task_id);
    expect(task).toMatchObject({ status: "completed", final_answer: 42, branch: "main" });
    const commits = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`);
    expect(commits.status).toBe(200);
    expect(commits.body.commits.map((c: { seq_no: number | null }) => c.seq_no)).toEqual([
      3,
      1,
      0,
      null,
    ]);
    expect(commits.body.next_cursor).toBeNull();
    // Three instructions ran (0, 1, 3); the plan commit is not a step.
    expect(task.usage.steps).toBe(3);
  });

  it("answers 400 with the error shape to a malformed body", async () => {
    const res = await t.api("POST", "/v1/tasks", undefined, { raw: '{"plan": [' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "malformed_json", details: { offset: 10 } });
    expect(typeof res.body.error.message).toBe("string");
    const wrong = await t.api("POST", "/v1/tasks", { goal: 5 });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe("malformed_request");
  });

  it("answers 422 with every problem to an instruction of an unknown type", async () => {
    const res = await t.api("POST", "/v1/tasks", {
      plan: [
        { seq_no: 0, type: "teleport", parameters: {} },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${nowhere}" } },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("invalid_plan");
    const codes = res.body.error.details.problems.map((p: { code: string }) => p.code);
    expect(codes).toContain("unknown_instruction_type");
    expect(res.body.error.details.problems[0]).toMatchObject({ seq_no: 0, path: "[0].type" });
  });

  it("answers 401 without a key and with a bad one", async () => {
    expect((await t.api("GET", "/v1/tasks", undefined, { key: null })).status).toBe(401);
    const bad = await t.api("GET", "/v1/tasks", undefined, {
      key: "svm_local_0000000000000000000000000000000000000000",
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe("unauthorized");
  });

  it("hides one tenant's task from another tenant's key (404, as a missing id)", async () => {
    const key = await t.api(
      "POST",
      "/v1/admin/tenants/other/keys",
      { name: "k" },
      { key: ADMIN_KEY },
    );
    expect(key.status).toBe(201);
    const created = await t.api("POST", "/v1/tasks", { plan: multiply(2, 3) });
    await t.waitForTask(created.body.task_id);
    const theirs = await t.api("GET", `/v1/tasks/${created.body.task_id}`, undefined, {
      key: key.body.key,
    });
    const missing = await t.api("GET", "/v1/tasks/tsk_doesnotexist", undefined, {
      key: key.body.key,
    });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe(missing.body.error.code);
    const list = await t.api("GET", "/v1/tasks", undefined, { key: key.body.key });
    expect(list.body.tasks).toEqual([]);
  });

  it("completes 50 tasks submitted at once, each with its answer and one commit per instruction", async () => {
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, i) => t.api("POST", "/v1/tasks", { plan: multiply(i, 3) })),
    );
    expect(created.every((r) => r.status === 202)).toBe(true);
    const tasks = await Promise.all(
      created.map((r) => t.waitForTask(r.body.task_id, { timeoutMs: 120_000 })),
    );
    tasks.forEach((task, i) => {
      expect(task.status).toBe("completed");
      expect(task.final_answer).toBe(i * 3);
    });
    const counts = await Promise.all(
      tasks.map(async (task) => {
        const res = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits?limit=100`);
        return res.body.commits.length;
      }),
    );
    expect(counts).toEqual(Array(50).fill(4));
  }, 180_000);
});
