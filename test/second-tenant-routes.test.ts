/**
 * The routes of issue 26 and the contract work (chat completions, models, blobs,
 * the events stream's tokens, a retry's Idempotency-Key, plan_compat) attacked
 * by a second tenant and with hostile input, through the API app in process over
 * the in-memory adapters (no HTTP, no emulator): every refusal is the answer a
 * missing thing gets, and writes nothing for the attacker or the victim.
 */

import type { createApp } from "@stackvm/api";
import type { Item, ItemStore } from "@stackvm/core";
import { taskBlobPrefix } from "@stackvm/core";
import { MemoryBlobs, MemoryItemStore } from "@stackvm/core/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessApi } from "./support/in-process-api";

/** Every put, as `pk sk`: what a refused request must not have written; and every call. */
function recording(inner: ItemStore): ItemStore & { puts: string[]; calls: { n: number } } {
  const puts: string[] = [];
  const calls = { n: 0 };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "puts") return puts;
      if (prop === "calls") return calls;
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      calls.n++;
      if (prop === "put" || prop === "update") {
        return (item: Item, ...rest: unknown[]) => {
          puts.push(`${item.pk} ${item.sk}`);
          return value.apply(target, [item, ...rest]);
        };
      }
      return value.bind(target);
    },
  }) as ItemStore & { puts: string[]; calls: { n: number } };
}

const items = recording(new MemoryItemStore());
const blobs = new MemoryBlobs();
let app: ReturnType<typeof createApp>;
let alice: string;
let mallory: string;

async function call(key: string, method: string, path: string, body?: unknown, headers = {}) {
  const response = await app.request(path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, body: json };
}

/** The writes `run` made, but the rate limiter's count of the caller's own requests. */
async function writesOf(run: () => Promise<unknown>): Promise<string[]> {
  const before = items.puts.length;
  await run();
  return items.puts.slice(before).filter((w) => !w.endsWith(" RATE"));
}

const PLAN = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];

beforeAll(async () => {
  const { app: made, system } = inProcessApi({ items, blobs });
  app = made;
  alice = (await system.keys.create("alice", "a")).key;
  mallory = (await system.keys.create("mallory", "m")).key;
  const ns = await call(alice, "PUT", "/v1/namespaces/secret-ns", {
    allowed_tools: ["llm_generate"],
  });
  expect(ns.status).toBeLessThan(300);
  // A template of alice's, as save-plan writes it (the id form is checked before any read).
  await items.put({
    pk: "T#alice",
    sk: "TEMPLATE#tpl_000000000000000000000001",
    template_id: "tpl_000000000000000000000001",
    namespace: "secret-ns",
    goal: "alice's goal",
    plan: PLAN,
    task_id: "tsk_alice",
    commit_id: "c1",
    created_at: "2026-01-01T00:00:00.000Z",
  });
});

describe("chat completions and models as another tenant", () => {
  it("answers another tenant's namespace or template exactly as a missing one, starting nothing", async () => {
    const ask = (model: string) =>
      call(mallory, "POST", "/v1/chat/completions", {
        model,
        messages: [{ role: "user", content: "hi" }],
      });
    const missing = await ask("no-such-ns");
    const writes = await writesOf(async () => {
      for (const model of ["secret-ns", "template:tpl_000000000000000000000001"]) {
        const theirs = await ask(model);
        expect(theirs.status).toBe(404);
        expect(theirs.headers.get("x-stackvm-task-id")).toBeNull();
        expect(theirs.body).toEqual({
          error: {
            ...missing.body.error,
            message: missing.body.error.message.replace("no-such-ns", model),
          },
        });
      }
    });
    expect(writes).toEqual([]);
    expect(missing.body.error).toMatchObject({ type: "not_found_error", code: "model_not_found" });
    const models = await call(mallory, "GET", "/v1/models");
    expect(models.body.data.map((m: { id: string }) => m.id)).toEqual(["default"]);
  });

  it("refuses content parts whose text is not a string, and no key, in OpenAI's shape", async () => {
    const bad = await call(mallory, "POST", "/v1/chat/completions", {
      model: "default",
      messages: [{ role: "user", content: [{ type: "text", text: { $ref: "s3" } }] }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      type: "invalid_request_error",
      param: "messages.0.content",
    });
    const tooMany = await call(mallory, "POST", "/v1/chat/completions", {
      model: "default",
      messages: Array.from({ length: 201 }, () => ({ role: "user", content: "x" })),
    });
    expect(tooMany.status).toBe(400);
    const keyless = await app.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "default", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(keyless.status).toBe(401);
    expect(((await keyless.json()) as any).error.type).toBe("authentication_error");
  });
});

describe("chat completions with hostile input", () => {
  it("refuses a goal over the task's limit as a 400 in OpenAI's shape, starting nothing", async () => {
    const writes = await writesOf(async () => {
      const answer = await call(mallory, "POST", "/v1/chat/completions", {
        model: "default",
        messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(10_001) }] }],
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ type: "invalid_request_error", param: "goal" });
      expect(answer.body.error.message).toMatch(/goal/);
    });
    expect(writes).toEqual([]);
  });

  it("stops following the task when a streaming client goes away; the task stays", async () => {
    const controller = new AbortController();
    const response = await app.request("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${mallory}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "default",
        stream: true,
        messages: [{ role: "user", content: "never answered: no worker runs here" }],
      }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const taskId = response.headers.get("x-stackvm-task-id")!;
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain(taskId);
    controller.abort();
    await reader.cancel().catch(() => undefined);
    // The stream polled the store while open; once the client is gone, it stops.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const settled = items.calls.n;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(items.calls.n).toBe(settled);
    const task = await call(mallory, "GET", `/v1/tasks/${taskId}`);
    expect(task.status).toBe(200);
    expect(task.body.metadata).toMatchObject({ source: "chat.completions" });
  });
});

describe("a task's blobs", () => {
  let first: string;
  let second: string;
  let sha: string;
  beforeAll(async () => {
    const start = async () =>
      (await call(alice, "POST", "/v1/tasks", { namespace: "default", plan: PLAN })).body.task_id;
    first = await start();
    second = await start();
    const html = new TextEncoder().encode("<svg onload=alert(1)><script>alert(1)</script></svg>");
    sha = (await blobs.put(taskBlobPrefix("alice", first), html, "image/svg+xml")).sha256;
  });

  it("serves a blob for its own task only: not to another tenant, not through another task", async () => {
    expect((await call(alice, "GET", `/v1/tasks/${first}/blobs/${sha}`)).status).toBe(200);
    const stolen = await call(mallory, "GET", `/v1/tasks/${first}/blobs/${sha}`);
    const missing = await call(mallory, "GET", `/v1/tasks/tsk_nosuchtask/blobs/${sha}`);
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.code).toBe(missing.body.error.code);
    expect((await call(alice, "GET", `/v1/tasks/${second}/blobs/${sha}`)).status).toBe(404);
  });

  it("refuses a malformed or traversing hash and never renders markup on the API's origin", async () => {
    for (const bad of ["..%2F..%2Fsecrets", sha.toUpperCase(), `${sha}0`, "%2e%2e"]) {
      const answer = await call(alice, "GET", `/v1/tasks/${first}/blobs/${bad}`);
      expect([400, 404]).toContain(answer.status);
    }
    for (const type of ["image/svg+xml", "text/html", "text/plain\r\nx: y", "IMAGE/SVG+XML"]) {
      const answer = await call(
        alice,
        "GET",
        `/v1/tasks/${first}/blobs/${sha}?type=${encodeURIComponent(type)}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toBe("application/octet-stream");
      expect(answer.headers.get("content-disposition")).toMatch(/^attachment/);
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
      expect(answer.headers.get("content-security-policy")).toContain("sandbox");
    }
    const shown = await call(alice, "GET", `/v1/tasks/${first}/blobs/${sha}?type=text/plain`);
    expect(shown.headers.get("content-type")).toBe("text/plain");
    expect(shown.headers.get("x-content-type-options")).toBe("nosniff");
    expect(shown.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
  });
});

describe("another tenant's task id on the events stream, retry and plan_compat", () => {
  let task: string;
  beforeAll(async () => {
    task = (await call(alice, "POST", "/v1/tasks", { namespace: "default", plan: PLAN })).body
      .task_id;
  });

  it("opens no stream and writes no watch mark for another tenant's task", async () => {
    const writes = await writesOf(async () => {
      const answer = await call(mallory, "GET", `/v1/tasks/${task}/events`);
      expect(answer.status).toBe(404);
    });
    expect(writes).toEqual([]);
  });

  it("signs no stream token for another tenant's task, and writes nothing (no secret made)", async () => {
    const writes = await writesOf(async () => {
      const answer = await call(mallory, "POST", `/v1/tasks/${task}/stream-token`, {});
      expect(answer.status).toBe(404);
      const unknown = await call(mallory, "POST", "/v1/tasks/tsk_nope/stream-token");
      expect(unknown.status).toBe(404);
    });
    expect(writes).toEqual([]);
  });

  it("opens nothing of a tenant with a token of another tenant's own task", async () => {
    const own = (await call(mallory, "POST", "/v1/tasks", { namespace: "default", plan: PLAN }))
      .body.task_id;
    const made = await call(mallory, "POST", `/v1/tasks/${own}/stream-token`, {});
    expect(made.status).toBe(201);
    const writes = await writesOf(async () => {
      for (const path of [`/v1/tasks/${task}`, `/v1/tasks/${task}/events`]) {
        const answer = await app.request(`${path}?token=${made.body.token}`);
        expect(answer.status, path).toBe(403);
      }
    });
    expect(writes).toEqual([]);
  });

  it("answers a retry of another tenant's task 404 and holds no key for anyone", async () => {
    const writes = await writesOf(async () => {
      const answer = await call(
        mallory,
        "POST",
        `/v1/tasks/${task}/retry`,
        { from: "start" },
        { "idempotency-key": "k-1" },
      );
      expect(answer.status).toBe(404);
    });
    expect(writes).toEqual([]);
  });

  it("refuses a plan_compat that is not a mode, with the modes named, and stores nothing", async () => {
    const writes = await writesOf(async () => {
      for (const plan_compat of ["STACKVM", "loose", 1, { $ref: task }]) {
        const started = await call(mallory, "POST", "/v1/tasks", {
          namespace: "default",
          plan: PLAN,
          plan_compat,
        });
        expect(started.status).toBe(400);
        expect(JSON.stringify(started.body)).toMatch(/plan_compat/);
        const ns = await call(mallory, "PUT", "/v1/namespaces/x", {
          allowed_tools: [],
          plan_compat,
        });
        expect(ns.status).toBe(400);
        const checked = await call(mallory, "POST", "/v1/plans/validate", {
          plan: PLAN,
          plan_compat,
        });
        expect(checked.status).toBe(400);
        expect(JSON.stringify(checked.body)).toMatch(/plan_compat/);
      }
    });
    expect(writes).toEqual([]);
  });

  it("does not let compatibility mode call a tool the namespace does not allow", async () => {
    await call(mallory, "PUT", "/v1/namespaces/narrow", { allowed_tools: ["llm_generate"] });
    const answer = await call(mallory, "POST", "/v1/tasks", {
      namespace: "narrow",
      plan_compat: "stackvm",
      plan: [
        { seq_no: 0, type: "http_request", parameters: { url: "http://169.254.169.254/" } },
        {
          seq_no: 1,
          type: "anything",
          parameters: { tool_name: "run_code", tool_params: { code: "1" }, output_vars: ["a"] },
        },
        { seq_no: 2, type: "assign", parameters: { final_answer: "${a}" } },
      ],
    });
    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.body)).toMatch(/run_code/);
    expect(JSON.stringify(answer.body)).toMatch(/http_request/);
  });
});
