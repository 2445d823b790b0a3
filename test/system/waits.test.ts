/**
 * Waiting branches through the whole local stack (issue 16, parts 2 and 3):
 * `wait` for seconds and for a time 20 minutes ahead (the clock is moved, not
 * slept), and `ask_human` answered by the API, by the resume URL of the
 * `task.waiting` webhook, with every attack on the answer path as a test:
 * wrong shapes, forged, reused and foreign tokens, another tenant, an answer
 * given twice, a wake delivered twice, timeouts and a cancel while waiting.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { enqueueNext, runStep } from "@stackvm/core";
import type { LocalScheduler } from "@stackvm/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";

/** The wall clock plus an offset the test moves forward. */
const clock = {
  offset: 0,
  now: () => Date.now() + clock.offset,
};

const t = useTestStack({ clock });

/** Bodies posted to the local receiver, by path. */
const received: Array<{ path: string; body: any }> = [];
let server: Server;
let receiver = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function start(plan: unknown[], extra: Record<string, unknown> = {}, key?: string) {
  const created = await t.api("POST", "/v1/tasks", { plan, ...extra }, key ? { key } : {});
  expect(created.status).toBe(202);
  return created.body.task_id as string;
}

async function waitingBranch(taskId: string, key?: string) {
  return until("the branch to wait", async () => {
    const { body } = await t.api(
      "GET",
      `/v1/tasks/${taskId}/branches/main`,
      undefined,
      key ? { key } : {},
    );
    return body.status === "waiting" ? body : undefined;
  });
}

async function commits(taskId: string) {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return (body.commits as any[]).reverse();
}

const askApproval = (extra: Record<string, unknown> = {}) => [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "ask_human",
      tool_params: { question: "Ship it?", schema: { type: "boolean" }, ...extra },
      output_vars: "approved",
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${approved}" } },
];

describe("wait", () => {
  it("waits 2 seconds, resumes exactly once although its step message came twice", async () => {
    const taskId = await start([
      { seq_no: 0, type: "wait", parameters: { seconds: 2 } },
      { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
    ]);
    const branch = await waitingBranch(taskId);
    expect(branch.waiting).toMatchObject({ kind: "time", question: null });
    expect(Date.parse(branch.waiting.until)).toBeGreaterThan(Date.parse(branch.updated_at));
    const task = await t.api("GET", `/v1/tasks/${taskId}`);
    expect(task.body.status).toBe("waiting");
    // A duplicate delivery of the step while it waits: it hides until due, then finds the head moved.
    const record = await t.stack.system.store.getBranch("local", taskId, "main");
    await enqueueNext(t.stack.system.step, record!, record!.head, "duplicate-delivery");
    const done = await t.waitForTask(taskId);
    expect(done.final_answer).toBe("done");
    const history = await commits(taskId);
    expect(history.map((c) => [c.type, c.seq_no])).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
    ]);
    expect(history[1].inputs.until).toBe(branch.waiting.until);
  });

  it("refuses a wait with both or neither of seconds and until, and an until without a zone", async () => {
    for (const parameters of [{}, { seconds: 1, until: "2030-01-01T00:00:00Z" }]) {
      const refused = await t.api("POST", "/v1/tasks", {
        plan: [
          { seq_no: 0, type: "wait", parameters },
          { seq_no: 1, type: "assign", parameters: { final_answer: 1 } },
        ],
      });
      expect(refused.status).toBe(422);
      expect(JSON.stringify(refused.body)).toContain("invalid_wait");
    }
    const local = await t.api("POST", "/v1/tasks", {
      plan: [
        { seq_no: 0, type: "wait", parameters: { until: "2030-01-01T09:00:00" } },
        { seq_no: 1, type: "assign", parameters: { final_answer: 1 } },
      ],
    });
    expect(local.status).toBe(422);
    expect(JSON.stringify(local.body)).toContain("zone");
  });
});

describe("ask_human", () => {
  it("waits for an answer, refuses a wrong shape with 422 and keeps waiting, then goes on with the API's answer", async () => {
    const taskId = await start(askApproval());
    const branch = await waitingBranch(taskId);
    expect(branch.waiting).toMatchObject({
      kind: "input",
      question: "Ship it?",
      schema: { type: "boolean" },
      expires_at: null,
    });
    const wrong = await t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, {
      answer: "yes",
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe("answer_does_not_match");
    expect(wrong.body.error.message).toContain("boolean");
    expect((await t.api("GET", `/v1/tasks/${taskId}/branches/main`)).body.status).toBe("waiting");
    const missing = await t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, {});
    expect(missing.status).toBe(400);

    const ok = await t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, { answer: true });
    expect(ok.status).toBe(200);
    const twice = await t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, { answer: false });
    expect(twice.status).toBe(409);
    const done = await t.waitForTask(taskId);
    expect(done.final_answer).toBe(true);
    const history = await commits(taskId);
    expect(history.map((c) => [c.type, c.seq_no])).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
    ]);
    expect(history[1].outputs).toEqual({ approved: true });
    expect(history[1].details).toMatchObject({ answered_by: "api" });
  });

  it("answers 404 to another tenant's answer and leaves the branch waiting", async () => {
    const taskId = await start(askApproval());
    await waitingBranch(taskId);
    const other = await t.api(
      "POST",
      "/v1/admin/tenants/stranger/keys",
      { name: "b" },
      { key: ADMIN_KEY },
    );
    const foreign = await t.api(
      "POST",
      `/v1/tasks/${taskId}/branches/main/input`,
      { answer: true },
      { key: other.body.key },
    );
    expect(foreign.status).toBe(404);
    expect((await t.api("GET", `/v1/tasks/${taskId}/branches/main`)).body.status).toBe("waiting");
    await t.api("POST", `/v1/tasks/${taskId}/cancel`);
    expect((await t.waitForTask(taskId)).status).toBe("cancelled");
  });

  it("sends task.waiting with a resume URL that answers once, and 404 to forged, reused and tampered tokens", async () => {
    const taskId = await start(askApproval(), { webhook_url: `${receiver}/waiting` });
    const hook = await until("the task.waiting webhook", async () =>
      received.find((r) => r.body.type === "task.waiting" && r.body.data.task_id === taskId),
    );
    expect(hook.body.data.status).toBe("waiting");
    const resumeUrl = hook.body.resume_url as string;
    expect(resumeUrl.startsWith(`${t.url}/v1/resume/rsm_`)).toBe(true);
    const path = resumeUrl.slice(t.url.length);
    const token = path.slice("/v1/resume/".length);

    const post = (p: string, body: unknown) => t.api("POST", p, body, { key: null });
    const [payload, mac] = token.slice(4).split(".") as [string, string];
    const forged = `rsm_${payload}.${mac.slice(0, -2)}${mac.endsWith("AA") ? "BB" : "AA"}`;
    expect((await post(`/v1/resume/${forged}`, { answer: true })).status).toBe(404);
    // Another wait id under a valid-looking payload: the MAC no longer fits.
    const other = JSON.parse(Buffer.from(payload, "base64url").toString());
    const swapped = Buffer.from(JSON.stringify({ ...other, w: "x".repeat(24) })).toString(
      "base64url",
    );
    expect((await post(`/v1/resume/rsm_${swapped}.${mac}`, { answer: true })).status).toBe(404);
    expect((await post("/v1/resume/rsm_nonsense", { answer: true })).status).toBe(404);

    const wrong = await post(path, { answer: "maybe" });
    expect(wrong.status).toBe(422);
    const ok = await post(path, { answer: false });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ task_id: taskId, branch: "main" });
    expect((await post(path, { answer: true })).status).toBe(404);

    const done = await t.waitForTask(taskId);
    expect(done.final_answer).toBe(false);
    const history = await commits(taskId);
    expect(history.filter((c) => c.seq_no === 0)).toHaveLength(1);
    expect(history[1].details).toMatchObject({ answered_by: "resume_url" });
  });

  it("uses the default when the timeout passes", async () => {
    const taskId = await start(askApproval({ timeout_seconds: 1, default: false }));
    const branch = await waitingBranch(taskId);
    expect(branch.waiting.expires_at).not.toBeNull();
    const done = await t.waitForTask(taskId);
    expect(done.final_answer).toBe(false);
    const history = await commits(taskId);
    expect(history[1].details).toMatchObject({ timed_out: true, used_default: true });
  });

  it("fails the step with human_timeout when the timeout passes without a default", async () => {
    t.llm.on("plan_update", () => ({ fault: "status", status: 400, message: "no plan update" }));
    const taskId = await start(askApproval({ timeout_seconds: 1 }));
    await waitingBranch(taskId);
    await until("the error commit", async () => {
      const history = await commits(taskId);
      return history.find((c) => c.type === "error");
    });
    const error = (await commits(taskId)).find((c) => c.type === "error");
    expect(error.error.code).toBe("human_timeout");
    expect(error.error.message).toContain("default");
    const late = await t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, { answer: true });
    expect(late.status).toBe(409);
  });

  it("cancels a waiting task", async () => {
    const taskId = await start(askApproval());
    await waitingBranch(taskId);
    const cancelled = await t.api("POST", `/v1/tasks/${taskId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect((await t.waitForTask(taskId)).status).toBe("cancelled");
    const late = await t.api("POST", `/v1/tasks/${taskId}/branches/main/input`, { answer: true });
    expect(late.status).toBe(409);
  });

  it("deletes a waiting task; its resume URL then answers 404", async () => {
    const taskId = await start(askApproval(), { webhook_url: `${receiver}/deleted` });
    const hook = await until("the task.waiting webhook", async () =>
      received.find((r) => r.body.type === "task.waiting" && r.body.data.task_id === taskId),
    );
    expect((await t.api("DELETE", `/v1/tasks/${taskId}`)).status).toBe(204);
    const path = (hook.body.resume_url as string).slice(t.url.length);
    expect((await t.api("POST", path, { answer: true }, { key: null })).status).toBe(404);
  });

  it("holds no running slot while it waits: a tenant limited to one running task runs another meanwhile", async () => {
    const key = (
      await t.api("POST", "/v1/admin/tenants/single/keys", { name: "ci" }, { key: ADMIN_KEY })
    ).body.key;
    const set = await t.api(
      "PUT",
      "/v1/admin/tenants/single/quotas",
      { max_running_tasks: 1 },
      { key: ADMIN_KEY },
    );
    expect(set.status).toBe(200);
    const asking = await start(askApproval(), {}, key);
    await waitingBranch(asking, key);
    const other = await start(
      [{ seq_no: 0, type: "assign", parameters: { final_answer: 7 } }],
      {},
      key,
    );
    expect((await t.waitForTask(other, { key })).final_answer).toBe(7);
    const answered = await t.api(
      "POST",
      `/v1/tasks/${asking}/branches/main/input`,
      { answer: true, source: "cli" },
      { key },
    );
    expect(answered.status).toBe(200);
    expect((await t.waitForTask(asking, { key })).final_answer).toBe(true);
  });
});

// Last: it moves the stack's clock 20 minutes ahead for the tests after it.
describe("wait for a time past the queue's delay", () => {
  it("resumes a wait 20 minutes ahead through the local scheduler when the clock gets there, once", async () => {
    const until20 = new Date(clock.now() + 20 * 60_000).toISOString();
    const taskId = await start([
      { seq_no: 0, type: "wait", parameters: { until: until20 } },
      { seq_no: 1, type: "assign", parameters: { final_answer: "later" } },
    ]);
    const branch = await waitingBranch(taskId);
    expect(Date.parse(branch.waiting.until)).toBe(Date.parse(until20));
    const scheduler = t.stack.system.step.wakes as LocalScheduler;
    const wakes = scheduler.pendingWakes().filter((w) => w.task_id === taskId);
    expect(wakes).toHaveLength(1);
    // Not due yet: firing sends nothing.
    scheduler.fireDueWakes();
    expect(scheduler.pendingWakes().filter((w) => w.task_id === taskId)).toHaveLength(1);

    clock.offset += 20 * 60_000 + 1000;
    scheduler.fireDueWakes();
    const done = await t.waitForTask(taskId);
    expect(done.final_answer).toBe("later");
    // The wake delivered again (EventBridge retries, the sweep): a duplicate, nothing committed.
    const again = await runStep(t.stack.system.step, {
      v: 1,
      kind: "step",
      tenant_id: "local",
      task_id: taskId,
      branch: "main",
      head: wakes[0]!.head,
    });
    expect(again.outcome).toBe("duplicate");
    const history = await commits(taskId);
    expect(history.map((c) => [c.type, c.seq_no])).toEqual([
      ["plan", null],
      ["step", 0],
      ["step", 1],
    ]);
  });
});
