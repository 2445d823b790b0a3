import { describe, expect, it } from "vitest";
import type { Api } from "./api";
import { TaskFeed, type TaskSnapshot } from "./task-feed";

const task = { task_id: "tsk_1", status: "running", branch: "main", final_answer: null };
const branch = { name: "main", status: "running", head: null };
const token = (text: string, extra: Record<string, unknown> = {}) =>
  `event: token\ndata: ${JSON.stringify({
    branch: "main",
    seq_no: 0,
    parent_id: "aaaaaaaa-0",
    purpose: "llm_generate",
    final_answer: true,
    text,
    ...extra,
  })}\n\n`;

/** An API whose events stream sends `chunks` one by one, as the test releases them. */
function fakeApi(chunks: string[]) {
  let push: (chunk: string | null) => void = () => undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (chunk) =>
        chunk === null ? controller.close() : controller.enqueue(new TextEncoder().encode(chunk));
    },
  });
  const api = {
    get: async (path: string) => (path.endsWith("/branches") ? { branches: [branch] } : task),
    raw: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
  } as unknown as Api;
  return { api, send: () => push(chunks.shift() ?? null) };
}

async function until(feed: TaskFeed, check: (s: TaskSnapshot) => boolean): Promise<TaskSnapshot> {
  for (let i = 0; i < 200; i++) {
    if (check(feed.current)) return feed.current;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${JSON.stringify(feed.current.writing)}`);
}

describe("TaskFeed", () => {
  it("grows a step's text as tokens come, and drops it when the step commits", async () => {
    const commit = {
      commit_id: "aaaaaaaa-1",
      branch: "main",
      parent_id: "aaaaaaaa-0",
      seq_no: 0,
    };
    const { api, send } = fakeApi([
      token("Kyoto "),
      token("keeps temples"),
      `event: commit\nid: x/aaaaaaaa-1\ndata: ${JSON.stringify(commit)}\n\n`,
    ]);
    const feed = new TaskFeed(api, "tsk_1", () => undefined);
    feed.start();
    await until(feed, (s) => s.live === "stream");
    send();
    await until(feed, (s) => s.writing[0]?.text === "Kyoto ");
    send();
    const grown = await until(feed, (s) => s.writing[0]?.text === "Kyoto keeps temples");
    expect(grown.writing).toHaveLength(1);
    expect(grown.writing[0]).toMatchObject({ seq_no: 0, final_answer: true });
    send();
    const done = await until(feed, (s) => s.commits.has("aaaaaaaa-1"));
    expect(done.writing).toEqual([]);
    feed.stop();
  });

  it("starts over when another call of the same step writes", async () => {
    const { api, send } = fakeApi([token('{"plan"', { purpose: "plan" }), token("Hello")]);
    const feed = new TaskFeed(api, "tsk_1", () => undefined);
    feed.start();
    await until(feed, (s) => s.live === "stream");
    send();
    await until(feed, (s) => s.writing[0]?.purpose === "plan");
    send();
    const after = await until(feed, (s) => s.writing[0]?.purpose === "llm_generate");
    expect(after.writing.map((w) => w.text)).toEqual(["Hello"]);
    feed.stop();
  });
});
