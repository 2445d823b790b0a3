/**
 * `GET /v1/tasks/{id}?wait=N`, the long poll: a task that ends while the
 * request waits is answered with its end (the model's answer is held until the
 * request is in flight), one still running is answered as it is when the
 * seconds are up, bad values are refused naming `wait`, another tenant's task
 * is a 404 that waits for nothing, and the wait holds one of the tenant's open
 * streams.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let mallory: string;

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Say hi" },
      output_vars: ["x"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
];

/** The model's answer waits on this gate until a test opens it. */
let open: () => void = () => undefined;
let gate = Promise.resolve();
let asked: () => void = () => undefined;
let called = Promise.resolve();
function hold(): void {
  gate = new Promise<void>((r) => {
    open = r;
  });
  called = new Promise<void>((r) => {
    asked = r;
  });
}

beforeAll(async () => {
  t = await startTestStack({});
  const made = await t.api(
    "POST",
    "/v1/admin/tenants/mallory/keys",
    { name: "m" },
    { key: ADMIN_KEY },
  );
  expect(made.status).toBe(201);
  mallory = made.body.key;
});
afterAll(async () => {
  open();
  await t?.stop();
});
beforeEach(() => {
  t.llm.reset();
  t.llm.on("text", async () => {
    asked();
    await gate;
    return "hi there";
  });
});

async function startHeld(key = t.apiKey): Promise<string> {
  hold();
  const created = await t.api("POST", "/v1/tasks", { plan: PLAN }, { key });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  await called;
  return created.body.task_id;
}

describe("GET /v1/tasks/{id}?wait=N", () => {
  it("answers a task that ends during the wait with its end", async () => {
    const taskId = await startHeld();
    expect((await t.api("GET", `/v1/tasks/${taskId}`)).body.status).toBe("running");
    const waited = t.api("GET", `/v1/tasks/${taskId}?wait=30`);
    // The request is in flight, holding a stream slot, while the model still writes.
    await waitFor(async () => (await t.stack.system.api.streams.count("local")) === 1);
    open();
    const answer = await waited;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      task_id: taskId,
      status: "completed",
      final_answer: "hi there",
    });
    // The slot is free again.
    expect(await t.stack.system.api.streams.count("local")).toBe(0);
  });

  it("answers a task still running when the seconds are up, as it is", async () => {
    const taskId = await startHeld();
    const answer = await t.api("GET", `/v1/tasks/${taskId}?wait=1`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ task_id: taskId, status: "running" });
    open();
    await t.waitForTask(taskId);
  });

  it("answers a task already ended at once, with or without wait", async () => {
    const created = await t.api("POST", "/v1/tasks", {
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: 7 } }],
    });
    await t.waitForTask(created.body.task_id);
    const answer = await t.api("GET", `/v1/tasks/${created.body.task_id}?wait=60`);
    expect(answer.body).toMatchObject({ status: "completed", final_answer: 7 });
  });

  it("refuses a wait that is not 1 to 60 whole seconds, naming the parameter", async () => {
    const taskId = await startHeld();
    for (const bad of ["0", "61", "-5", "1.5", "soon", "", "1e9"]) {
      const refused = await t.api("GET", `/v1/tasks/${taskId}?wait=${bad}`);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.message, bad).toContain("wait is whole seconds from 1 to 60");
    }
    open();
    await t.waitForTask(taskId);
  });

  it("answers another tenant's task 404 without waiting or taking a slot", async () => {
    const taskId = await startHeld();
    const refused = await t.api("GET", `/v1/tasks/${taskId}?wait=60`, undefined, { key: mallory });
    expect(refused.status).toBe(404);
    // Still running: the 404 did not wait for its end.
    expect((await t.api("GET", `/v1/tasks/${taskId}`)).body.status).toBe("running");
    expect(await t.stack.system.api.streams.count("mallory")).toBe(0);
    open();
    await t.waitForTask(taskId);
  });

  it("long-polls with a stream token of the task, and refuses one of another task at once", async () => {
    const taskId = await startHeld();
    const other = await t.api("POST", "/v1/tasks", {
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }],
    });
    const minted = await t.api("POST", `/v1/tasks/${other.body.task_id}/stream-token`, {});
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    const token = encodeURIComponent(minted.body.token);
    const refused = await t.api("GET", `/v1/tasks/${taskId}?wait=60&token=${token}`, undefined, {
      key: null,
    });
    expect([401, 403, 404]).toContain(refused.status);
    expect((await t.api("GET", `/v1/tasks/${taskId}`)).body.status).toBe("running");
    const own = await t.api("POST", `/v1/tasks/${taskId}/stream-token`, {});
    const waited = t.api(
      "GET",
      `/v1/tasks/${taskId}?wait=30&token=${encodeURIComponent(own.body.token)}`,
      undefined,
      { key: null },
    );
    await waitFor(async () => (await t.stack.system.api.streams.count("local")) === 1);
    open();
    expect((await waited).body).toMatchObject({ task_id: taskId, status: "completed" });
  });

  it("refuses wait given twice rather than picking one", async () => {
    const taskId = await startHeld();
    const twice = await t.api("GET", `/v1/tasks/${taskId}?wait=1&wait=60`);
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toContain("wait is whole seconds from 1 to 60, given once");
    open();
    await t.waitForTask(taskId);
  });

  it("holds the tenant to max_open_streams: a wait past it is a 429", async () => {
    const set = await t.api(
      "PUT",
      "/v1/admin/tenants/mallory/quotas",
      { max_open_streams: 1 },
      { key: ADMIN_KEY },
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const taskId = await startHeld(mallory);
    const first = t.api("GET", `/v1/tasks/${taskId}?wait=30`, undefined, { key: mallory });
    await waitFor(async () => (await t.stack.system.api.streams.count("mallory")) === 1);
    const refused = await t.api("GET", `/v1/tasks/${taskId}?wait=30`, undefined, {
      key: mallory,
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("too_many_streams");
    // Without wait the read is not a stream and goes through.
    expect((await t.api("GET", `/v1/tasks/${taskId}`, undefined, { key: mallory })).status).toBe(
      200,
    );
    open();
    expect((await first).body.status).toBe("completed");
  });

  it("names wait in the OpenAPI document", async () => {
    const doc = (await t.api("GET", "/openapi.json")).body;
    const params = doc.paths["/v1/tasks/{task_id}"].get.parameters;
    const wait = params.find((p: { name: string }) => p.name === "wait");
    expect(wait).toMatchObject({ in: "query", schema: { minimum: 1, maximum: 60 } });
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
