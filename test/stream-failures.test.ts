/**
 * A store failure in the middle of a Server-Sent Events answer (the events
 * stream, a streamed chat completion), whose message names the table and the
 * account as AWS's do: the client gets one error event of the API's own words
 * and nothing of the store's; the log gets the store's. Hono's `streamSSE`
 * wrote the raw message as a second `event: error` (`sse-failure.ts`). Through
 * the API app in process over the in-memory adapters.
 */
import type { createApp } from "@stackvm/api";
import type { Item, ItemStore, Log } from "@stackvm/core";
import { MemoryItemStore } from "@stackvm/core/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessApi } from "./support/in-process-api";

const INSIDE =
  "Requested resource not found: arn:aws:dynamodb:eu-west-1:123456789012:table/stackvm-prod-Table";

/** The in-memory store, failing every read of a task's partition once `failing` is set. */
const inner = new MemoryItemStore();
let failing = false;
const items = new Proxy(inner, {
  get(target, prop, receiver) {
    const value = Reflect.get(target, prop, receiver);
    if (typeof value !== "function") return value;
    if (prop !== "get" && prop !== "query") return value.bind(target);
    return (key: Item, ...rest: unknown[]) => {
      if (failing && String(key.pk).includes("#K#")) {
        return Promise.reject(new Error(INSIDE));
      }
      return value.apply(target, [key, ...rest]);
    };
  },
}) as ItemStore;

const errors: Array<{ message: string; extra: Record<string, unknown> }> = [];
const log: Log = {
  debug() {},
  info() {},
  warn() {},
  error: (message, extra = {}) => errors.push({ message, extra }),
};

let app: ReturnType<typeof createApp>;
let key: string;

beforeAll(async () => {
  // No worker drains the queue: the task stays queued and its stream stays open.
  const { app: made, system } = inProcessApi({ items, log });
  app = made;
  key = (await system.keys.create("alice", "a")).key;
});

/** Opens a stream, breaks the store once the first event arrived, and reads to the end. */
async function breakMidStream(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return text;
    text += chunk.value;
    if (!failing && text.includes("\n\n")) failing = true;
  }
}

const PLAN = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];
const headers = () => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

describe("a store failure in the middle of a stream", () => {
  it("ends the events stream with one error event of the API's words, the store's in the log", async () => {
    failing = false;
    const created = await app.request("/v1/tasks", {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ plan: PLAN }),
    });
    const { task_id } = (await created.json()) as { task_id: string };
    const before = errors.length;
    const text = await breakMidStream(
      await app.request(`/v1/tasks/${task_id}/events`, { headers: headers() }),
    );
    failing = false;
    expect(text).not.toContain("arn:aws");
    expect(text).not.toContain("stackvm-prod-Table");
    expect(text.match(/^event: error$/gm)).toHaveLength(1);
    expect(text.trimEnd().split("\n").at(-1)).toBe(
      `data: ${JSON.stringify({ code: "internal", message: "the event stream failed: reconnect" })}`,
    );
    expect(errors.slice(before)).toEqual([
      expect.objectContaining({
        message: "event stream failed",
        extra: expect.objectContaining({
          task_id,
          error: expect.objectContaining({ message: INSIDE }),
        }),
      }),
    ]);
  });

  it("ends a streamed chat completion with an error in OpenAI's shape, without the store's words", async () => {
    failing = false;
    const before = errors.length;
    const text = await breakMidStream(
      await app.request("/v1/chat/completions", {
        method: "POST",
        headers: headers(),
        body: JSON.stringify({
          model: "default",
          stream: true,
          messages: [{ role: "user", content: "Say done." }],
        }),
      }),
    );
    failing = false;
    expect(text).not.toContain("arn:aws");
    const last = JSON.parse(text.trimEnd().split("\n").at(-1)!.slice("data: ".length));
    expect(last).toEqual({
      error: {
        message: "the event stream failed: reconnect",
        type: expect.any(String),
        param: null,
        code: "internal",
      },
    });
    expect(errors.slice(before).map((e) => e.message)).toEqual(["event stream failed"]);
  });
});
