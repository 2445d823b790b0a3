/**
 * The events stream attacked, against the local stack: a second tenant after a
 * task's live text and call in flight (its id, other spellings of it, its own
 * stream beside it), hostile `Last-Event-ID` values (too long, malformed,
 * another task's, hundreds of made-up branches), a dozen streams of one task at
 * once, and the streams of a cancelled and a failed task, which must end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantKey } from "../support/attacker";
import { readSse } from "../support/sse";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let mallory: string;

const SECRET = "the secret answer of alice";
const generate = (prompt: string) => ({
  seq_no: 0,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: ["x"] },
});
const PLAN = [
  generate("Say the secret."),
  { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
];

/** The model's answers wait on this gate (from the third piece on) until a test opens it. */
let open: () => void = () => undefined;
let gate = Promise.resolve();
function hold(): void {
  gate = new Promise<void>((r) => {
    open = r;
  });
}

beforeAll(async () => {
  t = await startTestStack({
    streaming: {
      chunkChars: 4,
      beforeChunk: (index, _text, request) =>
        request.schemaName === "text" && index === 2 ? gate : undefined,
    },
  });
  t.llm.on("text", SECRET);
  mallory = await tenantKey(t, "mallory", "m");
});
afterAll(async () => {
  open();
  await t?.stop();
});

const url = (taskId: string, query = "") => `${t.url}/v1/tasks/${taskId}/events${query}`;

async function startPlan(plan: unknown[] = PLAN, key = t.apiKey): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", { plan }, { key });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return created.body.task_id;
}

async function commitIds(taskId: string): Promise<string[]> {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return body.commits.map((c: { commit_id: string }) => c.commit_id).reverse();
}

const commitsOf = (events: { event?: string; data: string }[]) =>
  events.filter((e) => e.event === "commit").map((e) => JSON.parse(e.data).commit_id as string);

describe("another tenant and a task's live text", () => {
  it("sees none of it: not by the id, not by another spelling of it, not beside its own task", async () => {
    hold();
    const taskId = await startPlan();
    // Alice's own stream gets the text as it is written: there is live text to steal.
    const alice = readSse(url(taskId), t.apiKey, {
      until: (events) =>
        events.some((e) => e.event === "token") && events.some((e) => e.event === "llm_call"),
    });
    const ownTask = await startPlan(
      [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }],
      mallory,
    );
    const own = await readSse(url(ownTask), mallory);
    expect((await alice).events.some((e) => e.event === "llm_call")).toBe(true);

    for (const id of [
      taskId,
      taskId.toUpperCase(),
      `${taskId} `,
      `${taskId}#LIVE`,
      encodeURIComponent(`../${taskId}`),
    ]) {
      const stolen = await readSse(url(id), mallory);
      expect(stolen.status, id).toBe(404);
      expect(stolen.events).toEqual([]);
      expect(
        (await t.api("GET", `/v1/tasks/${encodeURIComponent(id)}`, undefined, { key: mallory }))
          .status,
      ).toBe(404);
    }
    // Mallory's own stream ended with her task, and carried nothing of alice's.
    expect(own.events.at(-1)?.event).toBe("end");
    expect(own.events.some((e) => e.event === "token" || e.event === "llm_call")).toBe(false);
    expect(JSON.stringify(own.events)).not.toContain("secret");
    open();
    expect((await t.waitForTask(taskId)).final_answer).toBe(SECRET);
  });
});

describe("hostile Last-Event-ID values", () => {
  let taskId: string;
  let other: string;
  beforeAll(async () => {
    open();
    taskId = await startPlan();
    other = await startPlan();
    await t.waitForTask(taskId);
    await t.waitForTask(other);
  });

  it.each([
    ["over 8,000 characters", "2026-01-01T00:00:00.000Z/".padEnd(8001, "a")],
    ["not an id", "garbage"],
    ["a date and nothing else", "2026-01-01T00:00:00.000Z"],
    ["no date", "/abcdefgh-1"],
    ["a branch id of the wrong shape", "2026-01-01T00:00:00.000Z/ABC-1"],
    ["a negative depth", "2026-01-01T00:00:00.000Z/abcdefgh--1"],
    ["a depth past eight digits", "2026-01-01T00:00:00.000Z/abcdefgh-123456789"],
  ])("answers %s with a JSON 400 before any stream starts", async (_what, id) => {
    const answer = await t.api("GET", `/v1/tasks/${taskId}/events`, undefined, {
      headers: { "last-event-id": id },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBeTypeOf("string");
    const byQuery = await t.api(
      "GET",
      `/v1/tasks/${taskId}/events?last_event_id=${encodeURIComponent(id)}`,
    );
    expect(byQuery.status).toBe(400);
  });

  it("sends every commit of the task for another task's id or hundreds of made-up branches", async () => {
    const all = await commitIds(taskId);
    const others = await readSse(url(other), t.apiKey);
    const otherId = others.events.filter((e) => e.event === "commit").at(-1)!.id!;
    const madeUp = `2026-01-01T00:00:00.000Z/${Array.from({ length: 400 }, (_, i) => `${i.toString(36).padStart(8, "z")}-99999999`).join(".")}`;
    expect(madeUp.length).toBeLessThanOrEqual(8000);
    for (const lastEventId of [otherId, madeUp]) {
      const read = await readSse(url(taskId), t.apiKey, { lastEventId });
      expect(read.status).toBe(200);
      expect(commitsOf(read.events)).toEqual(all);
      expect(read.events.at(-1)?.event).toBe("end");
    }
  });
});

describe("many streams and streams that must end", () => {
  it("serves a dozen streams of one task at once, each every commit once, then the end", async () => {
    open();
    const taskId = await startPlan();
    const reads = await Promise.all(
      Array.from({ length: 12 }, () => readSse(url(taskId), t.apiKey)),
    );
    const all = await commitIds(taskId);
    for (const read of reads) {
      expect(read.closed).toBe(true);
      expect(commitsOf(read.events)).toEqual(all);
      expect(read.events.at(-1)).toMatchObject({ event: "end" });
    }
  });

  it("holds a tenant to max_open_streams: the next stream or chat completion is a 429 that starts nothing, other tenants go on", async () => {
    const set = await t.api(
      "PUT",
      "/v1/admin/tenants/mallory/quotas",
      { max_open_streams: 2 },
      { key: ADMIN_KEY },
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.quotas.max_open_streams).toBe(2);
    hold();
    const taskId = await startPlan(PLAN, mallory);
    const first = new AbortController();
    const second = new AbortController();
    const opened = [first, second].map((abort) =>
      fetch(url(taskId), { headers: { authorization: `Bearer ${mallory}` }, signal: abort.signal }),
    );
    for (const response of await Promise.all(opened)) expect(response.status).toBe(200);

    const refused = await t.api("GET", `/v1/tasks/${taskId}/events`, undefined, { key: mallory });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("too_many_streams");
    expect(refused.headers.get("retry-after")).toBe("20");
    const before = (await t.api("GET", "/v1/tasks?limit=100", undefined, { key: mallory })).body;
    const chat = await t.api(
      "POST",
      "/v1/chat/completions",
      { model: "default", messages: [{ role: "user", content: "Hello" }] },
      { key: mallory },
    );
    expect(chat.status).toBe(429);
    expect(chat.body.error.code).toBe("too_many_streams");
    const after = (await t.api("GET", "/v1/tasks?limit=100", undefined, { key: mallory })).body;
    expect(after.tasks.length).toBe(before.tasks.length);
    // Another tenant's streams are not counted with hers.
    const alice = await startPlan([{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }]);
    expect((await readSse(url(alice), t.apiKey)).events.at(-1)?.event).toBe("end");

    // A stream that closes frees its slot.
    first.abort();
    await waitFor(
      async () => (await readSse(url(taskId), mallory, { until: () => true })).status === 200,
    );
    second.abort();
    open();
    await t.waitForTask(taskId, { key: mallory });
  });

  it("ends the stream of a task cancelled while its model writes", async () => {
    hold();
    const taskId = await startPlan();
    const stream = readSse(url(taskId), t.apiKey);
    await waitFor(async () => (await t.api("GET", `/v1/tasks/${taskId}`)).body.llm_call != null);
    expect((await t.api("POST", `/v1/tasks/${taskId}/cancel`)).status).toBe(200);
    open();
    const read = await stream;
    expect(read.closed).toBe(true);
    expect(JSON.parse(read.events.at(-1)!.data)).toEqual({ task_id: taskId, status: "cancelled" });
  });

  it("ends the stream of a task deleted while its model writes, saying so", async () => {
    hold();
    const taskId = await startPlan();
    const stream = readSse(url(taskId), t.apiKey);
    await waitFor(async () => (await t.api("GET", `/v1/tasks/${taskId}`)).body.llm_call != null);
    expect((await t.api("DELETE", `/v1/tasks/${taskId}`)).status).toBe(204);
    const read = await stream;
    open();
    expect(read.closed).toBe(true);
    const last = read.events.at(-1)!;
    // One event says so, in JSON; the store's own words (Hono's second error event) never.
    expect(read.events.filter((e) => e.event === "error")).toHaveLength(1);
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toEqual({
      code: "not_found",
      message: "the task was deleted while it was streamed: there is nothing more to send",
    });
  });

  it("ends the stream of a task that fails", async () => {
    // The planner's plan is one the validator refuses: the task fails.
    t.llm.on("plan", { reasoning: "bad", plan: [{ seq_no: 0, type: "assign", parameters: {} }] });
    const created = await t.api("POST", "/v1/tasks", { goal: "Fail, please." });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id;
    const read = await readSse(url(taskId), t.apiKey);
    expect(read.closed).toBe(true);
    expect(JSON.parse(read.events.at(-1)!.data)).toEqual({ task_id: taskId, status: "failed" });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
