/**
 * Every status a route answers is one its OpenAPI operation documents, with the
 * error schema: each operation of `/openapi.json` is probed, through the API
 * app in process over the in-memory adapters, with the requests that draw its
 * refusals (no key, ids that do not exist, a body that is not JSON, sent as
 * text, over the limit, of the wrong shape, with unusable content, a name used
 * twice, an admin route as a tenant), and every answer is checked against the
 * document. A route that starts answering a status its operation does not list
 * fails here, with the route and the status.
 */

import type { createApp } from "@stackvm/api";
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessApi } from "./support/in-process-api";

const MAX_BODY_BYTES = 64 * 1024;
const ADMIN_KEY = "admin-key-for-status-tests-0123456789";

interface Operation {
  method: string;
  path: string;
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}

let app: ReturnType<typeof createApp>;
/** A server without STACKVM_ADMIN_KEY, and one that takes one request a second per tenant. */
let noAdmin: ReturnType<typeof createApp>;
let slow: ReturnType<typeof createApp>;
let slowKey: string;
let key: string;
let document: { paths: Record<string, Record<string, Operation>> };
const operations: Operation[] = [];
/** Every answer seen: `method path` to the statuses. */
const answered = new Map<string, Set<number>>();

async function send(
  op: Operation,
  options: {
    key?: string | null;
    path?: string;
    body?: string;
    type?: string;
    headers?: Record<string, string>;
    server?: ReturnType<typeof createApp>;
  } = {},
) {
  const token = options.key === undefined ? key : options.key;
  const response = await (options.server ?? app).request(options.path ?? fill(op.path), {
    method: op.method.toUpperCase(),
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(options.body === undefined ? {} : { "content-type": options.type ?? "application/json" }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await response.text();
  const id = `${op.method} ${op.path}`;
  answered.set(id, (answered.get(id) ?? new Set()).add(response.status));
  if (response.status >= 400) {
    // Every refusal has the one error shape, with a stable code and a message
    // (OpenAI's shape on the OpenAI-compatible routes, whose clients expect it).
    const body = JSON.parse(text);
    expect(body, `${id} ${response.status}`).toMatchObject({
      error: OPENAI.test(op.path)
        ? { type: expect.any(String), message: expect.any(String) }
        : { code: expect.any(String), message: expect.any(String) },
    });
  }
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // A page or a stream, not JSON.
  }
  return { status: response.status, text, body };
}

/** The OpenAI-compatible routes, which answer errors in OpenAI's shape. */
const OPENAI = /^\/v1\/(chat\/completions|models)$/;

/** The operation of a method and path of the document. */
function operation(method: string, path: string): Operation {
  const op = operations.find((o) => o.method === method && o.path === path);
  if (!op) throw new Error(`no operation ${method} ${path} in the document`);
  return op;
}

/** A path with every parameter set to a well-formed id that exists nowhere. */
function fill(path: string): string {
  const ids: Record<string, string> = {
    task_id: "tsk_00000000000000000000",
    name: "nosuchname",
    commit_id: "c_0000000000000000",
    n: "0",
    sha256: "0".repeat(64),
    token: "tok_nosuch",
    tool: "nosuchtool",
    server: "nosuchserver",
    template_id: "tpl_000000000000000000000099",
    key_id: "key_nosuch",
    tenant: "nosuchtenant",
    trigger_id: "trg_nosuch",
    schedule_id: "sch_nosuch",
    kb: "nosuchkb",
    document_id: "doc_nosuch",
  };
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? "x");
}

/** The API app of a system over the in-memory adapters, with these settings. */
function server(env: Record<string, string>) {
  return inProcessApi({ env: { STACKVM_MAX_BODY_BYTES: String(MAX_BODY_BYTES), ...env } });
}

beforeAll(async () => {
  noAdmin = server({ STACKVM_RATE_LIMIT_RPS: "100000" }).app;
  const limited = server({ STACKVM_RATE_LIMIT_RPS: "1", STACKVM_ANONYMOUS_RPS: "1" });
  slow = limited.app;
  slowKey = (await limited.system.keys.create("acme", "slow")).key;
  const admin = server({ STACKVM_ADMIN_KEY: ADMIN_KEY });
  const system = admin.system;
  app = admin.app;
  key = (await system.keys.create("acme", "statuses")).key;
  document = (await (await app.request("/openapi.json")).json()) as typeof document;
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (typeof op === "object" && op && "responses" in op) {
        operations.push({ ...op, method, path });
      }
    }
  }
});

const secured = (op: Operation) =>
  (op.security ?? []).some((s) => Object.keys(s as object).length > 0);
const takesJson = (op: Operation) => op.requestBody?.content?.["application/json"] !== undefined;

describe("the statuses of every route", () => {
  it("finds the operations to probe", () => {
    expect(operations.length).toBeGreaterThan(60);
  });

  it("answers each operation's refusals only with statuses it documents", async () => {
    for (const op of operations) {
      if (secured(op)) await send(op, { key: null });
      await send(op);
      if (op.method !== "get" && op.method !== "delete" && takesJson(op)) {
        await send(op, { body: "{not json" });
        await send(op, { body: "{}" });
        await send(op, { body: '{"x": 1}', type: "text/plain" });
        await send(op, { body: JSON.stringify({ pad: "x".repeat(MAX_BODY_BYTES) }) });
        await send(op, { body: JSON.stringify({ name: 7, goal: [], plan: {}, cron: 1 }) });
      }
    }
    await probeRefusals();
    const undocumented: string[] = [];
    const faults: string[] = [];
    for (const op of operations) {
      const id = `${op.method} ${op.path}`;
      for (const status of answered.get(id) ?? []) {
        if (!(String(status) in op.responses) && !("default" in op.responses)) {
          undocumented.push(`${id} answered ${status}`);
        }
        if (status >= 500) faults.push(`${id} answered ${status}`);
      }
    }
    expect(undocumented).toEqual([]);
    // A refusal is never the service's fault.
    expect(faults).toEqual([]);
  });

  it.each([400, 401, 403, 404, 409, 413, 422, 429])(
    "draws %i from some route, so the check above saw it",
    (status) => {
      const drawn = [...answered.values()].some((statuses) => statuses.has(status));
      expect(drawn).toBe(true);
    },
  );

  it("documents every error answer with the error schema", () => {
    const loose: string[] = [];
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[45]\d\d$/.test(status)) continue;
        const schema = response.content?.["application/json"]?.schema;
        const shape = OPENAI.test(op.path) ? "OpenAiError" : "Error";
        if (schema?.$ref !== `#/components/schemas/${shape}`) {
          loose.push(`${op.method} ${op.path} ${status}`);
        }
      }
    }
    expect(loose).toEqual([]);
  });
});

const PLAN = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];

/**
 * The refusals the generic probes cannot draw: a name used twice, content that
 * cannot be used, an admin route as a tenant and where none is configured, a
 * rate spent. Each answer goes through `send`, so the check above judges it.
 */
async function probeRefusals(): Promise<void> {
  const post = (path: string, body: unknown, options: Parameters<typeof send>[1] = {}) =>
    send(operation("post", path), { path: fill(path), body: JSON.stringify(body), ...options });
  // 409: an Idempotency-Key with another body; a knowledge base, a branch name used twice.
  const headers = { "idempotency-key": "k-1" };
  const task = await post("/v1/tasks", { plan: PLAN }, { headers });
  expect(task.status).toBe(202);
  const taskId = task.body.task_id as string;
  expect((await post("/v1/tasks", { plan: PLAN, name: "other" }, { headers })).status).toBe(409);
  await post("/v1/knowledge-bases", { name: "kb" });
  expect((await post("/v1/knowledge-bases", { name: "kb" })).status).toBe(409);
  const resultBranch = operation("delete", "/v1/tasks/{task_id}/branches/{name}");
  const main = `/v1/tasks/${taskId}/branches/main`;
  expect((await send(resultBranch, { path: main })).status).toBe(409);
  const answer = operation("post", "/v1/tasks/{task_id}/branches/{name}/input");
  const notWaiting = await send(answer, {
    path: `${main}/input`,
    body: JSON.stringify({ answer: 1 }),
  });
  expect(notWaiting.status).toBe(409);
  // The other refusals of a task that has not ended: retried, promoted, forked, saved.
  await post(`/v1/tasks/{task_id}/retry`, {}, { path: `/v1/tasks/${taskId}/retry` });
  await send(operation("post", "/v1/tasks/{task_id}/branches/{name}/promote"), {
    path: `${main}/promote`,
  });
  await post(
    "/v1/tasks/{task_id}/branches",
    { from_commit: "c_nosuch", name: "main" },
    {
      path: `/v1/tasks/${taskId}/branches`,
    },
  );
  await send(operation("post", "/v1/tasks/{task_id}/commits/{commit_id}/save-plan"), {
    path: `/v1/tasks/${taskId}/commits/c_nosuch/save-plan`,
  });
  await send(operation("post", "/v1/tasks/{task_id}/cancel"), {
    path: `/v1/tasks/${taskId}/cancel`,
  });
  await send(operation("post", "/v1/tasks/{task_id}/cancel"), {
    path: `/v1/tasks/${taskId}/cancel`,
  });
  // 422: a plan with problems, a cron that is not one, a schedule's unknown zone.
  const badPlan = [{ seq_no: 0, type: "jmp", parameters: { target_seq: 9 } }];
  expect((await post("/v1/tasks", { plan: badPlan })).status).toBe(422);
  expect((await post("/v1/triggers", { name: "t", plan: badPlan })).status).toBe(422);
  const cron = { name: "s", cron: "99 * * * *", plan: PLAN };
  expect((await post("/v1/schedules", cron)).status).toBe(422);
  const put = operation("put", "/v1/namespaces/{name}");
  const unknownTool = await send(put, {
    path: "/v1/namespaces/ns1",
    body: JSON.stringify({ allowed_tools: ["no_such_tool"] }),
  });
  expect(unknownTool.status).toBe(422);
  // 401 and 403 of the admin routes: a tenant's key, then a server with no admin key.
  for (const op of operations.filter((o) => o.path.startsWith("/v1/admin/"))) {
    const body = op.method === "get" ? {} : { body: JSON.stringify({ name: "k" }) };
    expect((await send(op, body)).status).toBe(401);
    await send(op, { ...body, key: ADMIN_KEY });
    const refused = await send(op, { ...body, key: ADMIN_KEY, server: noAdmin });
    expect(refused.status).toBe(403);
  }
  // 429: a tenant's requests per second spent, and the keyless routes' per source.
  const list = operation("get", "/v1/tasks");
  const statuses = [];
  for (let i = 0; i < 5; i++)
    statuses.push((await send(list, { key: slowKey, server: slow })).status);
  expect(statuses).toContain(429);
  for (const path of ["/v1/hooks/{trigger_id}", "/v1/resume/{token}"]) {
    const keyless: number[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await send(operation("post", path), {
        key: null,
        server: slow,
        body: "{}",
        headers: { "x-forwarded-for": "203.0.113.7" },
      });
      keyless.push(answer.status);
    }
    expect(keyless, path).toContain(429);
  }
}
