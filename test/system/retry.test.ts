/**
 * Every wait says why, through the local stack and the scripted LLM: a step that
 * failed shows its error, attempt and next attempt; an LLM that cannot be
 * reached fails the task within STACKVM_LLM_UNREACHABLE_SECONDS with that cause;
 * `POST /v1/tasks/{id}/retry` runs an ended task again from the start or from
 * its last commit; a task queued for a running slot shows its place in line.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse } from "../support/sse";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const t = useTestStack({
  env: { STACKVM_LLM_UNREACHABLE_SECONDS: "2", LLM_TIMEOUT_MS: "1500", LLM_MAX_ATTEMPTS: "1" },
});

const generate = {
  seq_no: 0,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt: "Say hi" }, output_vars: ["hi"] },
};
const answer = { seq_no: 1, type: "assign", parameters: { final_answer: "${hi}!" } };
const PLAN = [generate, answer];
/** A server that died: the connection closes without a byte of answer. */
const down = { fault: "close" };

async function start(body: Record<string, unknown>, key?: string): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", body, key ? { key } : {});
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return created.body.task_id;
}

/** Reads the task until `ok` says so (it may pass through other states first). */
async function until(taskId: string, ok: (task: any) => boolean, key?: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}`, undefined, key ? { key } : {});
    if (ok(body)) return body;
    if (Date.now() > deadline) throw new Error(`never reached: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const retry = (taskId: string, body?: unknown, options = {}) =>
  t.api("POST", `/v1/tasks/${taskId}/retry`, body, options);

async function commitsOf(taskId: string, branch: string): Promise<any[]> {
  const res = await t.api("GET", `/v1/tasks/${taskId}/branches/${branch}/commits?limit=100`);
  return res.body.commits.reverse();
}

describe("a step that will be retried says why", () => {
  it("shows the last error, the attempt and the next attempt on the task, the branch and the events, from the first failure", async () => {
    t.llm.queue(
      "plan",
      { fault: "500", message: "scripted outage" },
      { reasoning: "r", plan: PLAN },
    );
    t.llm.on("text", "hi");
    const taskId = await start({ goal: "Say hi" });
    const events = readSse(`${t.url}/v1/tasks/${taskId}/events`, t.apiKey);
    const retrying = (await until(taskId, (task) => task.retrying !== undefined)).retrying;
    expect(retrying).toMatchObject({
      attempt: 1,
      max_attempts: 5,
      error: { code: "llm_server_error" },
    });
    expect(retrying.error.message).toContain("scripted outage");
    expect(Date.parse(retrying.next_attempt_at)).toBeGreaterThan(Date.parse(retrying.since));
    const main = await t.api("GET", `/v1/tasks/${taskId}/branches/main`);
    expect(main.body.retrying).toMatchObject({ attempt: 1, error: { code: "llm_server_error" } });

    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({ status: "completed", final_answer: "hi!" });
    expect(done.retrying).toBeUndefined();
    const stream = (await events).events;
    const retryEvent = stream.find((e) => e.event === "retrying");
    expect(retryEvent, JSON.stringify(stream.map((e) => e.event))).toBeDefined();
    expect(JSON.parse(retryEvent!.data)).toMatchObject({
      branch: "main",
      attempt: 1,
      error: { code: "llm_server_error" },
    });
    // The failed delivery's call is in the commit that ended the failures, and in usage.
    const [plan] = await commitsOf(taskId, "main");
    expect(plan.llm_calls.map((c: any) => [c.purpose, c.error?.code ?? null])).toEqual([
      ["plan", "llm_server_error"],
      ["plan", null],
    ]);
    expect(done.usage.llm_calls).toBe(3);
  });
});

describe("an LLM that answers slowly", () => {
  it("is waited for as slow, not reported unreachable, and its first call is kept", async () => {
    // LLM_TIMEOUT_MS is 1.5 s here: the first answer comes after 4 s, the second at once.
    t.llm.queue(
      "plan",
      { fault: "slow", ms: 4_000, answer: { reasoning: "late", plan: PLAN } },
      { reasoning: "r", plan: PLAN },
    );
    t.llm.on("text", "hi");
    const taskId = await start({ goal: "Say hi" });
    const retrying = (await until(taskId, (task) => task.retrying !== undefined)).retrying;
    expect(retrying.error.code).toBe("llm_timeout");
    expect(retrying.error.message).toContain("LLM_TIMEOUT_MS");
    expect(retrying.error.message).not.toContain("could not be reached");
    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({ status: "completed", final_answer: "hi!" });
    const [plan] = await commitsOf(taskId, "main");
    expect(plan.llm_calls.map((c: any) => [c.purpose, c.attempts, c.error?.code ?? null])).toEqual([
      ["plan", 1, "llm_timeout"],
      ["plan", 1, null],
    ]);
  });
});

describe("code_task against an LLM that gives no answer", () => {
  it("fails within STACKVM_LLM_UNREACHABLE_SECONDS, with its failed calls on record", async () => {
    t.llm.on("code", down);
    const taskId = await start({
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "code_task",
            tool_params: { task: "Add 2 and 3." },
            output_vars: ["sum"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "${sum}" } },
      ],
    });
    const task = await t.waitForTask(taskId);
    expect(task.status).toBe("failed");
    expect(task.error).toContain("STACKVM_LLM_UNREACHABLE_SECONDS");
    const failed = (await commitsOf(taskId, "main")).find((c) => c.type === "error");
    expect(failed).toMatchObject({ error: { code: "llm_unreachable" } });
    const calls = failed.llm_calls;
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(
      calls.every((c: any) => c.purpose === "code" && c.error?.code === "llm_unreachable"),
    ).toBe(true);
    expect(task.usage.llm_calls).toBe(calls.length);
  });
});

describe("a parallel group against an LLM that gives no answer", () => {
  it("fails within STACKVM_LLM_UNREACHABLE_SECONDS as an ordinary step does, with every call on record", async () => {
    const gen = (seq: number, out: string) => ({
      seq_no: seq,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: `p${seq}` },
        output_vars: out,
      },
    });
    t.llm.on("text", down);
    const taskId = await start({
      plan: [
        gen(0, "a"),
        gen(1, "b"),
        { seq_no: 2, type: "assign", parameters: { final_answer: "${a}${b}" } },
      ],
    });
    const task = await t.waitForTask(taskId);
    expect(task.status).toBe("failed");
    expect(task.error).toContain("STACKVM_LLM_UNREACHABLE_SECONDS");
    const commits = await commitsOf(taskId, "main");
    const failed = commits.find((c) => c.type === "error");
    expect(failed).toMatchObject({ error: { code: "llm_unreachable" } });
    // Every attempt the members made is in a commit, and usage counts each call.
    const calls = commits.flatMap((c) => c.llm_calls);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c: any) => c.error?.code === "llm_unreachable")).toBe(true);
    const attempts = calls.reduce((n: number, c: any) => n + c.attempts, 0);
    expect(attempts).toBe(t.llm.requests.filter((r) => r.schemaName === "text").length);
    expect(task.usage.llm_calls).toBe(calls.length);
  });
});

describe("an LLM that cannot be reached", () => {
  it("fails the task within the configured bound, with that cause and no advice to fork", async () => {
    t.llm.on("plan", down);
    const taskId = await start({ goal: "Say hi" });
    const task = await t.waitForTask(taskId);
    expect(task.status).toBe("failed");
    expect(task.error).toContain("could not be reached");
    expect(task.error).toContain("STACKVM_LLM_UNREACHABLE_SECONDS");
    expect(task.error).not.toMatch(/fork/i);
    const [only] = await commitsOf(taskId, "main");
    expect(only).toMatchObject({ type: "error", error: { code: "llm_unreachable" } });
  });

  it("can be retried from the start once the LLM is back, as it has no commit to go on from", async () => {
    t.llm.on("plan", down);
    const taskId = await start({ goal: "Say hi" });
    expect((await t.waitForTask(taskId)).status).toBe("failed");
    t.llm.reset();
    t.llm.on("plan", { reasoning: "r", plan: PLAN });
    t.llm.on("text", "hello");
    // Without a plan yet, last_commit starts over too.
    const again = await retry(taskId, { from: "last_commit" });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body).toMatchObject({ status: "running", forked_from: null });
    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({
      status: "completed",
      branch: again.body.name,
      final_answer: "hello!",
      error: null,
    });
  });
});

describe("POST /v1/tasks/{id}/retry", () => {
  /** A submitted plan whose LLM step failed: a plan commit, then the error commit. */
  async function failedAtStep(): Promise<string> {
    t.llm.on("text", down);
    const taskId = await start({ plan: PLAN });
    const failed = await t.waitForTask(taskId);
    expect(failed.status).toBe("failed");
    t.llm.reset();
    t.llm.on("text", "back");
    return taskId;
  }

  it("from the last commit runs the failed step again on a branch that becomes the result", async () => {
    const taskId = await failedAtStep();
    const main = await commitsOf(taskId, "main");
    expect(main.map((c) => c.type)).toEqual(["plan", "error"]);
    const again = await retry(taskId, { from: "last_commit" });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.forked_from).toEqual({ branch: "main", commit_id: main[1].commit_id });
    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({
      status: "completed",
      branch: again.body.name,
      final_answer: "back!",
    });
    const commits = await commitsOf(taskId, again.body.name);
    expect(commits.map((c) => c.type)).toEqual(["plan", "error", "step", "step"]);
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["text"]);
  });

  it("from the start runs the submitted plan again, without the planner", async () => {
    const taskId = await failedAtStep();
    const again = await retry(taskId, { from: "start" });
    expect(again.status).toBe(202);
    const done = await t.waitForTask(taskId);
    expect(done).toMatchObject({ status: "completed", final_answer: "back!" });
    const commits = await commitsOf(taskId, again.body.name);
    expect(commits.map((c) => c.type)).toEqual(["plan", "step", "step"]);
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["text"]);
  });

  it("answers 422 with a hint for a bad from, 404 to another tenant, 409 for a task at work", async () => {
    const taskId = await failedAtStep();
    const bad = await retry(taskId, { from: "middle" });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("invalid_retry_from");
    expect(bad.body.error.message).toContain('"start" or "last_commit"');
    const unknownField = await retry(taskId, { form: "start" });
    expect(unknownField.status).toBe(400);

    const other = await t.api(
      "POST",
      "/v1/admin/tenants/other/keys",
      { name: "x" },
      { key: ADMIN_KEY },
    );
    const foreign = await retry(taskId, { from: "start" }, { key: other.body.key });
    expect(foreign.status).toBe(404);

    // The retry's run hangs on the LLM: a second click while it runs makes no second run.
    t.llm.reset();
    t.llm.on("text", down);
    const first = await retry(taskId, {});
    expect(first.status).toBe(202);
    const second = await retry(taskId, { from: "start" });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe("task_not_ended");
    expect(second.body.error.message).toContain("cancel it first");
    const branches = await t.api("GET", `/v1/tasks/${taskId}/branches`);
    expect(branches.body.branches.map((b: any) => b.name).sort()).toEqual(
      ["main", first.body.name].sort(),
    );
    expect((await t.waitForTask(taskId)).status).toBe("failed");
  });

  it("makes one run for a request delivered twice with the same Idempotency-Key", async () => {
    const taskId = await failedAtStep();
    const headers = { "idempotency-key": "click-42" };
    const [a, b] = await Promise.all([
      retry(taskId, { from: "last_commit" }, { headers }),
      retry(taskId, { from: "last_commit" }, { headers }),
    ]);
    const made = [a, b].filter((r) => r.status === 202);
    expect(made).toHaveLength(1);
    const other = a === made[0] ? b : a;
    expect([200, 409]).toContain(other.status);
    const later = await retry(taskId, { from: "last_commit" }, { headers });
    expect(later.status).toBe(200);
    expect(later.body.name).toBe(made[0]!.body.name);
    // The key names its body, as a task's does: another body with it is refused, not ignored.
    const reused = await retry(taskId, { from: "start" }, { headers });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe("idempotency_key_reused");
    expect(reused.body.error.message).toContain("use a new key");
    await t.waitForTask(taskId);
    const branches = await t.api("GET", `/v1/tasks/${taskId}/branches`);
    expect(branches.body.branches.map((x: any) => x.name).sort()).toEqual(
      ["main", made[0]!.body.name].sort(),
    );
  });
});

describe("a task waiting for a running slot", () => {
  let hold: Server;
  const held: ServerResponse[] = [];
  beforeAll(async () => {
    hold = createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => hold.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const res of held) res.end("{}");
    await new Promise<void>((resolve) => hold.close(() => resolve()));
  });

  it("says so with its place in line", async () => {
    const key = await t.api(
      "POST",
      "/v1/admin/tenants/narrow/keys",
      { name: "ci" },
      { key: ADMIN_KEY },
    );
    const k = key.body.key as string;
    const set = await t.api(
      "PUT",
      "/v1/admin/tenants/narrow/quotas",
      { max_running_tasks: 1 },
      { key: ADMIN_KEY },
    );
    expect(set.status).toBe(200);
    const ns = { allowed_tools: ["http_request"], allowed_hosts: ["127.0.0.1"] };
    expect((await t.api("PUT", "/v1/namespaces/held", ns, { key: k })).status).toBe(200);
    const url = `http://127.0.0.1:${(hold.address() as AddressInfo).port}/slow`;
    const slow = {
      namespace: "held",
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: { tool_name: "http_request", tool_params: { url }, output_vars: ["r"] },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
      ],
    };
    const running = await start(slow, k);
    await until(running, (task) => task.status === "running", k);
    const second = await start(slow, k);
    const third = await start(slow, k);
    const queued = await until(third, (task) => task.status === "queued", k);
    expect(queued.waiting_for_slot).toEqual({ position: 2, max_running_tasks: 1 });
    const next = await t.api("GET", `/v1/tasks/${second}`, undefined, { key: k });
    expect(next.body.waiting_for_slot).toEqual({ position: 1, max_running_tasks: 1 });
    for (const id of [second, third, running]) {
      await t.api("POST", `/v1/tasks/${id}/cancel`, undefined, { key: k });
    }
    for (const res of held.splice(0)) res.end("{}");
    for (const id of [running, second, third]) {
      expect((await t.waitForTask(id, { key: k })).status).toBe("cancelled");
    }
  });
});

describe("a retry and the tenant's monthly budget", () => {
  it("counts every run's tokens for the month, then refuses a retry with 429 once the month is spent", async () => {
    const made = await t.api(
      "POST",
      "/v1/admin/tenants/metered/keys",
      { name: "ci" },
      { key: ADMIN_KEY },
    );
    const key = made.body.key as string;
    const usage = async () =>
      (await t.api("GET", "/v1/admin/tenants/metered/quotas", undefined, { key: ADMIN_KEY })).body
        .usage.tokens as number;
    // The month's usage is added by the hook that ends the branch, which may still
    // run when the task already reads as ended: read until it is over `floor`.
    const usageOver = async (floor: number) => {
      for (let i = 0; i < 200; i++) {
        const tokens = await usage();
        if (tokens > floor) return tokens;
        await new Promise((r) => setTimeout(r, 50));
      }
      return usage();
    };
    t.llm.reset();
    t.llm.on("text", "hi");
    const taskId = await start({ plan: PLAN }, key);
    expect((await t.waitForTask(taskId, { key })).status).toBe("completed");
    const once = await usageOver(0);
    expect(once).toBeGreaterThan(0);

    const again = await retry(taskId, { from: "start" }, { key });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect((await t.waitForTask(taskId, { key })).branch).toBe(again.body.name);
    expect(await usageOver(once)).toBe(2 * once);

    // Nothing is left to run after the last commit of a completed task: the answer says what to do.
    const nothing = await retry(taskId, { from: "last_commit" }, { key });
    expect(nothing.status).toBe(422);
    expect(nothing.body.error.code).toBe("nothing_to_run");
    expect(nothing.body.error.message).toContain('{"from": "start"}');
    expect(nothing.body.error.message).toContain("fork an earlier commit");

    const spent = await t.api(
      "PUT",
      "/v1/admin/tenants/metered/quotas",
      { monthly_token_budget: 2 * once },
      { key: ADMIN_KEY },
    );
    expect(spent.status).toBe(200);
    const refused = await retry(taskId, { from: "start" }, { key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("monthly_budget_exhausted");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const branches = await t.api("GET", `/v1/tasks/${taskId}/branches`, undefined, { key });
    expect(branches.body.branches).toHaveLength(2);
  });
});

const mergePlan = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Give the steps as a JSON object with a key 'steps'" },
      output_vars: ["region_merge_steps"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "Do: ${region_merge_steps.steps}" } },
];

describe("a strict step that fails at run time while the planner gets no answer", () => {
  it("ends the task failed (StackVM production plan #299 in short), nothing left running", async () => {
    t.llm.on("text", () => "First merge, then split.");
    t.llm.on("plan_update", down);
    const created = await t.api("POST", "/v1/tasks", { plan: mergePlan });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const task = await t.waitForTask(created.body.task_id, { timeoutMs: 60_000 });
    expect(task.status).toBe("failed");
    expect(task.error).toContain("could not be reached");
    const commits = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits?limit=100`);
    const codes = commits.body.commits.map(
      (c: { error: { code: string } | null }) => c.error?.code,
    );
    // Newest first: the planner's failure ends the branch, after the step's own error.
    expect(codes.slice(0, 2)).toEqual(["llm_unreachable", "unknown_reference"]);
    const branch = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main`);
    expect(branch.body.status).toBe("failed");
  }, 90_000);
});
