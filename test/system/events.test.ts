/**
 * Live events over HTTP against the local stack: every commit in order, status
 * changes, the end, and resuming after a disconnect with Last-Event-ID.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse } from "../support/sse";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;

const PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: { prompt: "Name a city." },
      output_vars: ["city"],
    },
  },
  { seq_no: 1, type: "assign", parameters: { n: 2 } },
  { seq_no: 2, type: "assign", parameters: { m: "${n} * 3" } },
  { seq_no: 3, type: "assign", parameters: { final_answer: "${city} x ${m}" } },
];

beforeAll(async () => {
  t = await startTestStack();
  t.llm.on("plan", { reasoning: "four steps", plan: PLAN });
  t.llm.on("text", "Kyoto");
});
afterAll(async () => {
  await t?.stop();
});

async function start(): Promise<string> {
  const created = await t.api("POST", "/v1/tasks", { goal: "Name a city, then do arithmetic." });
  expect(created.status).toBe(202);
  return created.body.task_id;
}

async function allCommits(taskId: string): Promise<string[]> {
  const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return body.commits.map((c: { commit_id: string }) => c.commit_id).reverse();
}

const eventsUrl = (taskId: string) => `${t.url}/v1/tasks/${taskId}/events`;

describe("GET /v1/tasks/{id}/events", () => {
  it("streams every commit in order, the status changes, then the end", async () => {
    const taskId = await start();
    const read = await readSse(eventsUrl(taskId), t.apiKey);
    expect(read.status).toBe(200);
    expect(read.closed).toBe(true);
    const commits = read.events.filter((e) => e.event === "commit");
    const ids = commits.map((e) => JSON.parse(e.data).commit_id);
    expect(ids).toEqual(await allCommits(taskId));
    expect(ids).toHaveLength(5);
    expect(commits.map((e) => JSON.parse(e.data).type)).toEqual([
      "plan",
      "step",
      "step",
      "step",
      "step",
    ]);
    // Ids sort in the order the events came.
    const eventIds = commits.map((e) => e.id!);
    expect([...eventIds].sort()).toEqual(eventIds);
    const statuses = read.events.filter((e) => e.event === "status");
    expect(JSON.parse(statuses.at(-1)!.data)).toMatchObject({
      task_id: taskId,
      status: "completed",
      final_answer: "Kyoto x 6",
    });
    expect(read.events.at(-1)!.event).toBe("end");
  });

  it("resumes after a disconnect with Last-Event-ID, without losing or repeating a commit", async () => {
    const taskId = await start();
    const first = await readSse(eventsUrl(taskId), t.apiKey, {
      until: (events) => events.filter((e) => e.event === "commit").length === 2,
    });
    expect(first.closed).toBe(false);
    const firstIds = first.events.filter((e) => e.event === "commit");
    const lastId = firstIds.at(-1)!.id!;
    const rest = await readSse(eventsUrl(taskId), t.apiKey, { lastEventId: lastId });
    const restIds = rest.events.filter((e) => e.event === "commit");
    const seen = [...firstIds, ...restIds].map((e) => JSON.parse(e.data).commit_id);
    expect(seen).toEqual(await allCommits(taskId));
    expect(rest.events.at(-1)!.event).toBe("end");
  });

  it("answers 404, 400 and 401 as JSON before any stream starts", async () => {
    const missing = await t.api("GET", "/v1/tasks/tsk_nope/events");
    expect(missing.status).toBe(404);
    const taskId = await start();
    const bad = await t.api("GET", `/v1/tasks/${taskId}/events`, undefined, {
      headers: { "last-event-id": "not-an-id" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/reconnect without it/);
    const anonymous = await t.api("GET", `/v1/tasks/${taskId}/events`, undefined, { key: null });
    expect(anonymous.status).toBe(401);
    await t.waitForTask(taskId);
  });
});
