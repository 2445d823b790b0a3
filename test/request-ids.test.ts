/**
 * The caller's `x-request-id`, echoed on every answer and written on the log
 * line of every request, sent hostile: very long, non-ASCII, with a tab, as two
 * headers. Each is replaced by an id of the server's own, on the answer and in
 * the log alike; an ordinary id is kept. Through the API app in process over the
 * in-memory adapters.
 */
import type { createApp } from "@stackvm/api";
import type { Log } from "@stackvm/core";
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessApi } from "./support/in-process-api";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const lines: Array<{ message: string; extra: Record<string, unknown> }> = [];
const log: Log = {
  debug() {},
  info: (message, extra = {}) => lines.push({ message, extra }),
  warn: (message, extra = {}) => lines.push({ message, extra }),
  error: (message, extra = {}) => lines.push({ message, extra }),
};

let app: ReturnType<typeof createApp>;
let key: string;

beforeAll(async () => {
  const { app: made, system } = inProcessApi({ log });
  app = made;
  key = (await system.keys.create("alice", "a")).key;
});

/** One request with `ids` as its x-request-id header(s): the id answered and the one logged. */
async function ask(path: string, ids: string[], withKey = true) {
  const headers = new Headers(withKey ? { authorization: `Bearer ${key}` } : {});
  for (const id of ids) headers.append("x-request-id", id);
  const before = lines.length;
  const response = await app.request(path, { headers });
  await response.text();
  const logged = lines.slice(before).find((l) => l.message === "request");
  return {
    status: response.status,
    answered: response.headers.get("x-request-id"),
    logged: logged?.extra.request_id,
  };
}

describe("x-request-id", () => {
  it("keeps an ordinary id, on the answer and in the log, errors included", async () => {
    for (const [path, status, withKey] of [
      ["/v1/tasks", 200, true],
      ["/v1/tasks/tsk_missing", 404, true],
      ["/v1/tasks", 401, false],
    ] as const) {
      const id = "req-2026-11-27.a1b2:c3/d4=";
      const seen = await ask(path, [id], withKey);
      expect(seen).toEqual({ status, answered: id, logged: id });
    }
  });

  it.each([
    ["16 KB long", ["x".repeat(16_000)]],
    ["129 characters long", ["y".repeat(129)]],
    ["not ASCII", ["réq-ü"]],
    ["with a tab inside", ["a\tb"]],
    ["with a space inside", ["a b"]],
    ["sent as two headers", ["first", "second"]],
  ])(
    "replaces an id %s by one of the server's own, the same on the answer and in the log",
    async (_what, ids) => {
      const seen = await ask("/v1/tasks", ids);
      expect(seen.status).toBe(200);
      expect(seen.answered).toMatch(UUID);
      expect(seen.logged).toBe(seen.answered);
    },
  );

  it("keeps an id of exactly 128 visible characters", async () => {
    const id = "z".repeat(128);
    expect((await ask("/healthz", [id], false)).answered).toBe(id);
  });
});
