/**
 * Conversations that continue, through the whole local stack with the scripted
 * LLM: three turns over the API (`POST /v1/tasks/{id}/continue`) and over the
 * chat face (the official `openai` client, the thread named by the
 * `x-stackvm-thread` header and by `metadata.thread_id`) keep the first turn's
 * variable in the third turn's plan, asserted on the planner prompt the
 * scripted LLM received and on the answer; forking turn two and continuing the
 * fork starts a new line of the thread; and the continues an attacker or a
 * careless client sends are refused, leaving nothing behind.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tenantKey } from "../support/attacker";
import type { RecordedRequest } from "../support/llm-server";
import { askFirst } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let other: string;
let client: OpenAI;

const assign = (seq_no: number, parameters: Record<string, unknown>) => ({
  seq_no,
  type: "assign",
  parameters,
});

/** The plan for each turn's goal: turn one sets `city`, turn two `temple`, turn three reads both. */
const PLANS: Record<string, unknown[]> = {
  "Pick a city.": [assign(0, { city: "Kyoto" }), assign(1, { final_answer: "I pick ${city}" })],
  "Name its famous temple.": [
    assign(0, { temple: "Kinkakuji in ${city}" }),
    assign(1, { final_answer: "${temple}" }),
  ],
  "Summarise.": [assign(0, { final_answer: "${city}: ${temple}" })],
  "Name its old gate.": [assign(0, { final_answer: "Rashomon in ${city}" })],
};

const userText = (request: RecordedRequest) => request.messages.at(-1)?.content ?? "";
const goalOf = (request: RecordedRequest) =>
  Object.keys(PLANS).find((goal) => userText(request).includes(`The task's goal: ${goal}`));
/** The planner prompts the scripted LLM received for a goal. */
const plannerPrompts = (goal: string) =>
  t.llm.requests.filter((r) => r.schemaName === "plan" && goalOf(r) === goal).map(userText);

async function start(goal: string) {
  const started = await t.api("POST", "/v1/tasks", { goal });
  expect(started.status).toBe(202);
  return t.waitForTask(started.body.task_id);
}

async function continueTask(taskId: string, body: unknown, key?: string) {
  return t.api("POST", `/v1/tasks/${taskId}/continue`, body, key ? { key } : {});
}

async function waitForStatus(taskId: string, statuses: string[]) {
  for (let i = 0; i < 400; i++) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}`);
    if (statuses.includes(body.status)) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${taskId} never reached ${statuses.join(" or ")}`);
}

beforeAll(async () => {
  t = await startTestStack();
  client = new OpenAI({ apiKey: t.apiKey, baseURL: `${t.url}/v1`, maxRetries: 0 });
  other = await tenantKey(t, "intruder", "b");
}, 60_000);
afterAll(async () => {
  await t?.stop();
});
beforeEach(() => {
  t.llm.reset();
  t.llm.on("plan", (request) => {
    const goal = goalOf(request);
    if (!goal) throw new Error(`no scripted plan for ${userText(request).slice(0, 200)}`);
    return JSON.stringify({ reasoning: `the plan for ${goal}`, plan: PLANS[goal] });
  });
});

describe("threads over the API", () => {
  it("keeps the first turn's variable in the third turn's plan and answer", async () => {
    const first = await start("Pick a city.");
    expect(first.final_answer).toBe("I pick Kyoto");

    const second = await continueTask(first.task_id, { goal: "Name its famous temple." });
    expect(second.status).toBe(202);
    expect(second.body.thread_id).toBe(first.task_id);
    const turn2 = await t.waitForTask(second.body.task_id);
    expect(turn2).toMatchObject({
      status: "completed",
      final_answer: "Kinkakuji in Kyoto",
      thread: { thread_id: first.task_id, turn: 2, parent: { task_id: first.task_id } },
    });

    const third = await continueTask(turn2.task_id, { goal: "Summarise." });
    const turn3 = await t.waitForTask(third.body.task_id);
    expect(turn3.final_answer).toBe("Kyoto: Kinkakuji in Kyoto");

    const [prompt] = plannerPrompts("Summarise.");
    expect(prompt).toContain("This goal continues a conversation");
    expect(prompt).toContain("Turn 1: Pick a city.\nAnswer: I pick Kyoto");
    expect(prompt).toContain("Turn 2: Name its famous temple.\nAnswer: Kinkakuji in Kyoto");
    expect(prompt).toMatch(/city \("?Kyoto"?\)/);
    expect(prompt).toMatch(/temple \("?Kinkakuji in Kyoto"?\)/);

    // Each turn is an ordinary task, with its own commits and usage.
    const commits = await t.api("GET", `/v1/tasks/${turn3.task_id}/branches/main/commits`);
    expect(commits.body.commits.length).toBeGreaterThan(1);
    expect(turn3.usage.llm_calls).toBe(1);

    const thread = await t.api("GET", `/v1/threads/${first.task_id}`);
    expect(thread.status).toBe(200);
    expect(thread.body).toMatchObject({
      thread_id: first.task_id,
      title: "Pick a city.",
      latest_task_id: turn3.task_id,
      lines: [[first.task_id, turn2.task_id, turn3.task_id]],
    });
    expect(thread.body.turns.map((turn: any) => [turn.turn, turn.status])).toEqual([
      [1, "completed"],
      [2, "completed"],
      [3, "completed"],
    ]);
    const listed = await t.api("GET", "/v1/threads");
    expect(listed.body.threads.map((x: any) => x.thread_id)).toContain(first.task_id);
  });

  it("starts a new line of the thread from a fork of turn two", async () => {
    const first = await start("Pick a city.");
    const turn2 = await t.waitForTask(
      (await continueTask(first.task_id, { goal: "Name its famous temple." })).body.task_id,
    );
    const commits = (
      await t.api("GET", `/v1/tasks/${turn2.task_id}/branches/main/commits?limit=100`)
    ).body.commits.reverse();
    const fork = await t.api("POST", `/v1/tasks/${turn2.task_id}/branches`, {
      from_commit: commits[0].commit_id,
      name: "silver",
      plan: [
        assign(0, { temple: "Ginkakuji in ${city}" }),
        assign(1, { final_answer: "${temple}" }),
      ],
    });
    expect(fork.status).toBe(202);
    for (let i = 0; i < 400; i++) {
      const { body } = await t.api("GET", `/v1/tasks/${turn2.task_id}/branches/silver`);
      if (body.status === "completed") break;
      await new Promise((r) => setTimeout(r, 50));
    }

    const onMain = await t.waitForTask(
      (await continueTask(turn2.task_id, { goal: "Summarise." })).body.task_id,
    );
    const onFork = await t.waitForTask(
      (await continueTask(turn2.task_id, { goal: "Summarise.", branch: "silver" })).body.task_id,
    );
    expect(onMain.final_answer).toBe("Kyoto: Kinkakuji in Kyoto");
    expect(onFork.final_answer).toBe("Kyoto: Ginkakuji in Kyoto");
    expect(onFork.thread).toMatchObject({
      turn: 3,
      parent: { task_id: turn2.task_id, branch: "silver" },
    });
    expect(plannerPrompts("Summarise.").at(-1)).toContain("Answer: Ginkakuji in Kyoto");

    const thread = (await t.api("GET", `/v1/threads/${first.task_id}`)).body;
    expect(thread.lines).toEqual([
      [first.task_id, turn2.task_id, onMain.task_id],
      [first.task_id, turn2.task_id, onFork.task_id],
    ]);
  });
});

describe("threads over the chat face", () => {
  it("continues the thread the header and then metadata.thread_id name, to the third turn", async () => {
    const one = await client.chat.completions
      .create({ model: "default", messages: [{ role: "user", content: "Pick a city." }] })
      .withResponse();
    expect(one.data.choices[0]?.message.content).toBe("I pick Kyoto");
    const threadId = one.response.headers.get("x-stackvm-thread")!;
    expect(threadId).toBe(one.response.headers.get("x-stackvm-task-id"));

    const two = await client.chat.completions
      .create(
        {
          model: "default",
          messages: [
            { role: "user", content: "Pick a city." },
            { role: "assistant", content: "I pick Kyoto" },
            { role: "user", content: "Name its famous temple." },
          ],
        },
        { headers: { "x-stackvm-thread": threadId } },
      )
      .withResponse();
    expect(two.data.choices[0]?.message.content).toBe("Kinkakuji in Kyoto");
    expect(two.response.headers.get("x-stackvm-thread")).toBe(threadId);

    const three = await client.chat.completions
      .create({
        model: "default",
        messages: [{ role: "user", content: "Summarise." }],
        metadata: { thread_id: threadId },
      })
      .withResponse();
    expect(three.data.choices[0]?.message.content).toBe("Kyoto: Kinkakuji in Kyoto");
    const [prompt] = plannerPrompts("Summarise.");
    expect(prompt).toContain("Turn 1: Pick a city.\nAnswer: I pick Kyoto");
    expect(prompt).toMatch(/city \("?Kyoto"?\)/);

    const thread = (await t.api("GET", `/v1/threads/${threadId}`)).body;
    expect(thread.lines).toEqual([
      [
        threadId,
        two.response.headers.get("x-stackvm-task-id"),
        three.response.headers.get("x-stackvm-task-id"),
      ],
    ]);
  });

  it("answers a threaded request sent again (an SDK's retry) with the turn it started, not a second turn", async () => {
    const first = await start("Pick a city.");
    const body = {
      model: "default",
      messages: [{ role: "user", content: "Name its famous temple." }],
    };
    const asked = async (headers: Record<string, string>) =>
      client.chat.completions
        .create(body as never, { headers: { "x-stackvm-thread": first.task_id, ...headers } })
        .withResponse();
    const once = await asked({ "x-stainless-retry-count": "0" });
    const again = await asked({ "x-stainless-retry-count": "1" });
    expect(again.response.headers.get("x-stackvm-task-id")).toBe(
      once.response.headers.get("x-stackvm-task-id"),
    );
    const keyed = await asked({ "idempotency-key": "turn-3" });
    const keyedAgain = await asked({ "idempotency-key": "turn-3" });
    expect(keyedAgain.response.headers.get("x-stackvm-task-id")).toBe(
      keyed.response.headers.get("x-stackvm-task-id"),
    );
    const thread = (await t.api("GET", `/v1/threads/${first.task_id}`)).body;
    // The first turn, the request and its retry as one turn, the keyed request and its retry as one.
    expect(thread.turns).toHaveLength(3);
    // What the request is known by stays out of the turn's metadata, which the client reads.
    const turn = await t.api("GET", `/v1/tasks/${once.response.headers.get("x-stackvm-task-id")}`);
    expect(turn.body.metadata).toHaveProperty("thread_id");
    expect(turn.body.metadata).not.toHaveProperty("chat_request");
  });

  it("answers a threaded request whose tries all timed out, sent again after its turn ended, with that turn", async () => {
    const first = await start("Pick a city.");
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    t.llm.streaming = {
      beforeChunk: (_i, _text, request) =>
        request.schemaName === "plan" && goalOf(request) === "Name its old gate."
          ? released
          : undefined,
    };
    // LangChain's way: no retry header, a new request after each timeout.
    const send = (timeoutMs?: number) =>
      fetch(`${t.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${t.apiKey}`,
          "content-type": "application/json",
          "x-stackvm-thread": first.task_id,
        },
        body: JSON.stringify({
          model: "default",
          messages: [{ role: "user", content: "Name its old gate." }],
        }),
        ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
      });
    for (let i = 0; i < 2; i++) await expect(send(700)).rejects.toThrow();
    release();
    const turns = async () => (await t.api("GET", `/v1/threads/${first.task_id}`)).body.turns;
    for (let i = 0; i < 400 && (await turns()).at(-1)?.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await turns()).map((x: { status: string }) => x.status)).toEqual([
      "completed",
      "completed",
    ]);
    const third = await send();
    expect(third.status).toBe(200);
    expect(
      ((await third.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]
        ?.message.content,
    ).toBe("Rashomon in Kyoto");
    expect(third.headers.get("x-stackvm-task-id")).toBe((await turns())[1].task_id);
    expect(await turns()).toHaveLength(2);
    // Answered now: the same question once more is a new turn (a chat front end's "regenerate").
    expect((await send()).status).toBe(200);
    expect(await turns()).toHaveLength(3);
  });

  it("refuses another tenant's thread and a malformed thread id, starting nothing", async () => {
    const first = await start("Pick a city.");
    const before = (await t.api("GET", "/v1/tasks?limit=100", undefined, { key: other })).body.tasks
      .length;
    const stranger = new OpenAI({ apiKey: other, baseURL: `${t.url}/v1`, maxRetries: 0 });
    await expect(
      stranger.chat.completions.create(
        { model: "default", messages: [{ role: "user", content: "Summarise." }] },
        { headers: { "x-stackvm-thread": first.task_id } },
      ),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      client.chat.completions.create({
        model: "default",
        messages: [{ role: "user", content: "Summarise." }],
        metadata: { thread_id: "../tsk" },
      }),
    ).rejects.toMatchObject({ status: 400 });
    const after = (await t.api("GET", "/v1/tasks?limit=100", undefined, { key: other })).body.tasks
      .length;
    expect(after).toBe(before);
  });
});

describe("continues that are refused", () => {
  it("answers 404 for another tenant's task and thread", async () => {
    const first = await start("Pick a city.");
    await continueTask(first.task_id, { goal: "Name its famous temple." });
    const foreign = await continueTask(first.task_id, { goal: "Summarise." }, other);
    expect(foreign.status).toBe(404);
    expect(
      (await t.api("GET", `/v1/threads/${first.task_id}`, undefined, { key: other })).status,
    ).toBe(404);
    expect((await t.api("GET", "/v1/threads", undefined, { key: other })).body.threads).toEqual([]);
  });

  it("refuses a task still waiting, and a failed one, with what to do", async () => {
    t.llm.on("plan", {
      reasoning: "ask first",
      plan: askFirst("Which?"),
    });
    const waiting = (await t.api("POST", "/v1/tasks", { goal: "Ask me." })).body.task_id;
    await waitForStatus(waiting, ["waiting"]);
    const early = await continueTask(waiting, { goal: "Summarise." });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: "task_not_finished" });
    expect(early.body.error.message).toMatch(/wait until it completes/);

    const failed = await t.api("POST", "/v1/tasks", {
      plan: [assign(0, { x: 1 }), assign(1, { final_answer: "${x}" })],
      budget: { max_steps: 1 },
    });
    expect((await t.waitForTask(failed.body.task_id)).status).toBe("failed");
    const late = await continueTask(failed.body.task_id, { goal: "Summarise." });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: "task_not_completed" });
    expect(late.body.error.message).toMatch(/retry it/);
    expect((await t.api("GET", `/v1/threads/${failed.body.task_id}`)).status).toBe(404);
  });

  it("refuses an oversized goal, a wrong type and an unknown field, writing nothing", async () => {
    const first = await start("Pick a city.");
    const tasksBefore = (await t.api("GET", "/v1/tasks?limit=100")).body.tasks.length;
    for (const body of [
      { goal: "x".repeat(10_001) },
      { goal: 42 },
      { goal: "Summarise.", namespace: "other" },
      { goal: "Summarise.", branch: "../main" },
    ]) {
      expect((await continueTask(first.task_id, body)).status).toBe(400);
    }
    expect((await continueTask(first.task_id, { goal: "Summarise.", branch: "nope" })).status).toBe(
      404,
    );
    expect((await t.api("GET", "/v1/tasks?limit=100")).body.tasks.length).toBe(tasksBefore);
    expect((await t.api("GET", `/v1/threads/${first.task_id}`)).status).toBe(404);
  });

  it("answers the same turn for a continue delivered twice with one Idempotency-Key", async () => {
    const first = await start("Pick a city.");
    const send = () =>
      t.api(
        "POST",
        `/v1/tasks/${first.task_id}/continue`,
        { goal: "Name its famous temple." },
        { headers: { "idempotency-key": "turn-2" } },
      );
    const once = await send();
    const twice = await send();
    expect([once.status, twice.status]).toEqual([202, 200]);
    expect(twice.body.task_id).toBe(once.body.task_id);
    await t.waitForTask(once.body.task_id);
    const thread = (await t.api("GET", `/v1/threads/${first.task_id}`)).body;
    expect(thread.turns.map((turn: any) => turn.task_id)).toEqual([
      first.task_id,
      once.body.task_id,
    ]);
    const reused = await t.api(
      "POST",
      `/v1/tasks/${first.task_id}/continue`,
      { goal: "Summarise." },
      { headers: { "idempotency-key": "turn-2" } },
    );
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe("idempotency_key_reused");
  });
});
