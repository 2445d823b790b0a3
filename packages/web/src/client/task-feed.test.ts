import type { Branch, Commit, Task } from "@stackvm/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Api } from "./api";
import { TaskFeed, type TaskSnapshot } from "./task-feed";

const task = (status: Task["status"]): Task => ({
  task_id: "tsk_1",
  goal: "g",
  name: null,
  title: "g",
  namespace: "default",
  status,
  branch: "main",
  final_answer: null,
  error: null,
  response_format: {},
  metadata: {},
  usage: { steps: 0, llm_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});
const branch = (head: string | null, status: Branch["status"]): Branch => ({
  name: "main",
  status,
  head,
  forked_from: null,
  final_answer: null,
  error: null,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});
const commit = (id: string, parent: string | null): Commit => ({
  commit_id: id,
  parent_id: parent,
  branch: "main",
  type: "step",
  seq_no: 0,
  instruction: null,
  inputs: null,
  outputs: {},
  pc_before: 0,
  pc_after: 1,
  error: null,
  llm_calls: [],
  duration_ms: 1,
  created_at: "2026-01-01T00:00:00.000Z",
});

/** A fake API: the task runs until `finish()`; `events` answers the stream route. */
function fakeApi(events: () => Response) {
  let done = false;
  const calls: string[] = [];
  const api: Api = {
    async get<T>(path: string) {
      calls.push(path);
      if (path.endsWith("/branches")) {
        return { branches: [branch(done ? "c2" : "c1", done ? "completed" : "running")] } as T;
      }
      if (path.includes("/commits")) {
        return {
          commits: done ? [commit("c2", "c1"), commit("c1", null)] : [commit("c1", null)],
          next_cursor: null,
        } as T;
      }
      return task(done ? "completed" : "running") as T;
    },
    post: async () => undefined as never,
    put: async () => undefined as never,
    patch: async () => undefined as never,
    delete: async () => {},
    raw: async () => events(),
  };
  return { api, calls, finish: () => (done = true) };
}

describe("TaskFeed", () => {
  let seen: TaskSnapshot[];
  beforeEach(() => {
    seen = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("follows the event stream and adds each commit it carries", async () => {
    const body = `event: commit\nid: e1\ndata: ${JSON.stringify(commit("c9", "c1"))}\n\nevent: end\ndata: {}\n\n`;
    const fake = fakeApi(
      () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
    const feed = new TaskFeed(fake.api, "tsk_1", (s) => seen.push(s));
    feed.start();
    await vi.waitFor(() => expect(seen.some((s) => s.commits.has("c9"))).toBe(true));
    expect(seen.some((s) => s.live === "stream")).toBe(true);
    feed.stop();
  });

  it("polls when the server has no event stream, and rests once everything ended", async () => {
    vi.useFakeTimers();
    const fake = fakeApi(
      () =>
        new Response(JSON.stringify({ error: { code: "not_found", message: "no route" } }), {
          status: 404,
          headers: { "content-type": "application/json" },
        }),
    );
    const feed = new TaskFeed(fake.api, "tsk_1", (s) => seen.push(s));
    feed.start();
    await vi.advanceTimersByTimeAsync(50);
    await vi.advanceTimersByTimeAsync(1000);
    expect(feed.current.live).toBe("poll");

    fake.finish();
    await vi.advanceTimersByTimeAsync(1000);
    expect(feed.current.commits.has("c2")).toBe(true);
    expect(feed.current.live).toBeNull();
    const reads = fake.calls.length;
    await vi.advanceTimersByTimeAsync(5000);
    expect(fake.calls.length).toBe(reads);
    feed.stop();
  });
});
