/**
 * The events stream after its end and across a reconnect (issue 41, item 5),
 * with the `eventsource` package as a client uses it: after `event: end` its
 * reconnect answers 204, so the EventSource stops on its own; a resume with
 * `Last-Event-ID` in the middle of a step's text sends none of the text the
 * first connection received, and loses none of the rest.
 */
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/plans";
import { readSse } from "../support/sse";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;

const ANSWER = "Kyoto keeps its temples in autumn, maples red over moss gardens.";
/** One model call whose text is the final answer, as it streams. */
const PLAN = [call(0, "llm_generate", { prompt: "Describe Kyoto." }, ["final_answer"])];

/** Gates on the model's answer: before its first piece, and before its `HELD_AT`th. */
const HELD_AT = 6;
let gates: { first: Promise<void>; middle: Promise<void> } = {
  first: Promise.resolve(),
  middle: Promise.resolve(),
};

beforeAll(async () => {
  t = await startTestStack({
    // Answers held mid-way and streamed over seconds: within the LLM's timeout, never tried again.
    env: { LLM_TIMEOUT_MS: "30000" },
    streaming: {
      chunkChars: 4,
      beforeChunk: (index, _text, request) => {
        if (request.schemaName !== "text") return undefined;
        if (index === 0) return gates.first;
        return index === HELD_AT ? gates.middle : undefined;
      },
    },
  });
  t.llm.on("text", ANSWER);
});
afterAll(async () => {
  await t?.stop();
});

function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

const eventsUrl = (taskId: string) => `${t.url}/v1/tasks/${taskId}/events`;
const texts = (events: { event?: string; data: string }[]) =>
  events
    .filter((e) => e.event === "token")
    .map((e) => JSON.parse(e.data).text as string)
    .join("");

describe("the events stream after its end", () => {
  it("answers an EventSource's reconnect after `event: end` with 204, and the EventSource stops", async () => {
    const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
    const taskId = created.body.task_id as string;
    await t.waitForTask(taskId);
    const statuses: number[] = [];
    const lastIds: Array<string | null> = [];
    const source = new EventSource(eventsUrl(taskId), {
      fetch: async (input, init) => {
        const headers = new Headers(init?.headers);
        lastIds.push(headers.get("last-event-id"));
        headers.set("authorization", `Bearer ${t.apiKey}`);
        const response = await fetch(input, { ...init, headers });
        statuses.push(response.status);
        return response;
      },
    });
    const ends: string[] = [];
    source.addEventListener("end", (event) => ends.push(event.lastEventId));
    // The stream closes after `end`; the EventSource reconnects once and is told to stop.
    const error = await new Promise<Event & { code?: number }>((resolve) => {
      source.onerror = (event) => {
        if (source.readyState === EventSource.CLOSED) resolve(event);
      };
    });
    expect(error.code).toBe(204);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatch(/\/end$/);
    expect(statuses).toEqual([200, 204]);
    expect(lastIds).toEqual([null, ends[0]]);
    // Still closed a reconnect interval later: nothing more was asked.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(statuses).toEqual([200, 204]);
  });

  it("answers the end's id with the stream again once a fork made the task go on", async () => {
    const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
    const taskId = created.body.task_id as string;
    await t.waitForTask(taskId);
    const first = await readSse(eventsUrl(taskId), t.apiKey);
    const end = first.events.at(-1)!;
    expect(end.event).toBe("end");
    const commits = first.events.filter((e) => e.event === "commit");
    const plan = JSON.parse(commits[0]!.data).commit_id as string;
    const forked = await t.api("POST", `/v1/tasks/${taskId}/branches`, {
      from_commit: plan,
      name: "again",
    });
    expect(forked.status, JSON.stringify(forked.body)).toBe(202);
    const again = await readSse(eventsUrl(taskId), t.apiKey, { lastEventId: end.id! });
    expect(again.status).toBe(200);
    const resumed = again.events.filter((e) => e.event === "commit");
    expect(resumed.length).toBeGreaterThan(0);
    expect(resumed.every((e) => JSON.parse(e.data).branch === "again")).toBe(true);
    expect(again.events.at(-1)!.event).toBe("end");
  });

  it("refuses an end id it did not send with 400, not 204", async () => {
    const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
    const taskId = created.body.task_id as string;
    await t.waitForTask(taskId);
    for (const id of [
      "nonsense/end",
      "2026-01-01T00:00:00.000Z/x/end",
      "2026-01-01T00:00:00.000Z//a-1/b-2/end",
    ]) {
      const answer = await t.api("GET", `/v1/tasks/${taskId}/events`, undefined, {
        headers: { "last-event-id": id },
      });
      expect(answer.status, id).toBe(400);
    }
  });
});

describe("a resume in the middle of a step's text", () => {
  it("sends none of the text the first connection received, and all the rest", async () => {
    const first = gate();
    const middle = gate();
    gates = { first: first.wait, middle: middle.wait };
    try {
      const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
      const taskId = created.body.task_id as string;
      // The first connection watches before the model writes; it leaves once it has
      // every piece before the held one (the stream is dropped, as a network would).
      const before = ANSWER.slice(0, HELD_AT * 4);
      const one = await readSse(eventsUrl(taskId), t.apiKey, {
        until: (events) => {
          first.open();
          return texts(events) === before;
        },
      });
      expect(one.closed).toBe(false);
      expect(texts(one.events)).toBe(before);
      const lastId = one.events.at(-1)!.id;
      expect(lastId).toBeDefined();
      middle.open();
      const two = await readSse(eventsUrl(taskId), t.apiKey, { lastEventId: lastId! });
      expect(two.events.at(-1)!.event).toBe("end");
      expect(texts(two.events)).toBe(ANSWER.slice(before.length));
    } finally {
      first.open();
      middle.open();
      gates = { first: Promise.resolve(), middle: Promise.resolve() };
    }
  });
});

describe("a watcher who comes mid-step", () => {
  it("gets that step's text: what was written before it came, then the rest as it comes", async () => {
    const long = `${ANSWER} ${ANSWER} ${ANSWER}`;
    const middle = gate();
    t.llm.reset();
    t.llm.on("text", long);
    t.llm.streaming = {
      chunkChars: 4,
      chunkDelayMs: 30,
      beforeChunk: (index, _text, request) =>
        request.schemaName === "text" && index === HELD_AT ? middle.wait : undefined,
    };
    try {
      const created = await t.api("POST", "/v1/tasks", { goal: "Describe Kyoto.", plan: PLAN });
      const taskId = created.body.task_id as string;
      // Nobody watches while the model writes its first pieces: the step found no mark.
      for (const deadline = Date.now() + 20_000; ; ) {
        const { body } = await t.api("GET", `/v1/tasks/${taskId}`);
        if ((body.llm_call?.tokens_so_far ?? 0) > 0) break;
        if (Date.now() > deadline) throw new Error("the model never started");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const watcher = readSse(eventsUrl(taskId), t.apiKey);
      // Released once the watcher's stream is open (it wrote the mark before its first event).
      setTimeout(() => middle.open(), 300);
      const read = await watcher;
      expect(read.events.at(-1)!.event).toBe("end");
      const commit = read.events.findIndex(
        (e) => e.event === "commit" && JSON.parse(e.data).type === "step",
      );
      const live = texts(read.events.slice(0, commit));
      // The rest of the step, and what came before the watcher too, before the step's commit.
      expect(live.endsWith(long.slice(HELD_AT * 4))).toBe(true);
      expect(live).toBe(long);
    } finally {
      middle.open();
      t.llm.reset();
      t.llm.on("text", ANSWER);
    }
  });
});
