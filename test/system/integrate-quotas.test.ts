/**
 * What a paid API promises, over HTTP: Idempotency-Key, a rate limit per tenant
 * (429 with Retry-After), running tasks at once (the extra ones wait `queued`,
 * then run), a monthly budget, and API keys that stop working once revoked.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
/** A server that holds every request until `release()`: it keeps a task running. */
let hold: Server;
let holdUrl: string;
const held: ServerResponse[] = [];

beforeAll(async () => {
  t = await startTestStack();
  hold = createServer((_req, res) => {
    held.push(res);
  });
  await new Promise<void>((resolve) => hold.listen(0, "127.0.0.1", resolve));
  holdUrl = `http://127.0.0.1:${(hold.address() as AddressInfo).port}/slow`;
});
afterAll(async () => {
  for (const res of held) res.end("{}");
  await t?.stop();
  await new Promise<void>((resolve) => hold?.close(() => resolve()));
});

const answer = (value: unknown) => [
  { seq_no: 0, type: "assign", parameters: { final_answer: value } },
];

/** A key of a fresh tenant, with quota overrides set by the operator. */
async function tenantWith(tenant: string, quotas: Record<string, unknown>): Promise<string> {
  const key = await t.api(
    "POST",
    `/v1/admin/tenants/${tenant}/keys`,
    { name: "ci" },
    { key: ADMIN_KEY },
  );
  expect(key.status).toBe(201);
  const set = await t.api("PUT", `/v1/admin/tenants/${tenant}/quotas`, quotas, { key: ADMIN_KEY });
  expect(set.status).toBe(200);
  return key.body.key;
}

describe("Idempotency-Key", () => {
  it("answers the same task (200) for the same key and body, and 409 for another body", async () => {
    const headers = { "idempotency-key": "order-7731" };
    const first = await t.api("POST", "/v1/tasks", { plan: answer(1) }, { headers });
    const again = await t.api("POST", "/v1/tasks", { plan: answer(1) }, { headers });
    const other = await t.api("POST", "/v1/tasks", { plan: answer(2) }, { headers });
    const fresh = await t.api("POST", "/v1/tasks", { plan: answer(1) });
    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again.body.task_id).toBe(first.body.task_id);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_key_reused");
    expect(fresh.body.task_id).not.toBe(first.body.task_id);
  });
});

describe("rate limit", () => {
  it("answers 429 with Retry-After past the tenant's requests per second, and only to that tenant", async () => {
    const key = await tenantWith("hasty", { requests_per_second: 2 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => t.api("GET", "/v1/tasks", undefined, { key })),
    );
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited[0]!.body.error.code).toBe("rate_limited");
    expect((await t.api("GET", "/v1/tasks")).status).toBe(200);
  });
});

describe("running tasks at once", () => {
  it("keeps tasks past the limit queued, then runs them when the running one ends", async () => {
    const key = await tenantWith("narrow", { max_running_tasks: 1 });
    const ns = await t.api(
      "PUT",
      "/v1/namespaces/local-http",
      { allowed_tools: ["http_request"], allowed_hosts: ["127.0.0.1"] },
      { key },
    );
    expect(ns.status).toBe(200);
    const slow = await t.api(
      "POST",
      "/v1/tasks",
      {
        namespace: "local-http",
        plan: [
          {
            seq_no: 0,
            type: "calling",
            parameters: {
              tool_name: "http_request",
              tool_params: { url: holdUrl },
              output_vars: ["r"],
            },
          },
          { seq_no: 1, type: "assign", parameters: { final_answer: "slow done" } },
        ],
      },
      { key },
    );
    expect(slow.status).toBe(202);
    // The slow task holds the only slot while its request waits.
    const deadline = Date.now() + 20_000;
    while (held.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(held).toHaveLength(1);

    const extra = await Promise.all(
      [1, 2].map((n) => t.api("POST", "/v1/tasks", { plan: answer(n) }, { key })),
    );
    expect(extra.map((e) => e.status)).toEqual([202, 202]);
    for (const e of extra) {
      const task = await t.api("GET", `/v1/tasks/${e.body.task_id}`, undefined, { key });
      expect(task.body.status).toBe("queued");
    }
    held.shift()!.end(JSON.stringify({ ok: true }));
    expect((await t.waitForTask(slow.body.task_id, { key })).final_answer).toBe("slow done");
    const done = await Promise.all(extra.map((e) => t.waitForTask(e.body.task_id, { key })));
    expect(done.map((d) => [d.status, d.final_answer])).toEqual([
      ["completed", 1],
      ["completed", 2],
    ]);
  });
});

describe("monthly budget", () => {
  it("refuses new tasks with 429 and Retry-After when the month's budget is spent", async () => {
    const key = await tenantWith("spent", { monthly_token_budget: 0 });
    const refused = await t.api("POST", "/v1/tasks", { plan: answer(1) }, { key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("monthly_budget_exhausted");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const quotas = await t.api("GET", "/v1/admin/tenants/spent/quotas", undefined, {
      key: ADMIN_KEY,
    });
    expect(quotas.body.quotas.monthly_token_budget).toBe(0);
    // A tenant's key does not open the operator's routes.
    expect((await t.api("GET", "/v1/admin/tenants/spent/quotas", undefined, { key })).status).toBe(
      401,
    );
    // And the operator's key opens nothing but /v1/admin.
    expect((await t.api("GET", "/v1/tasks", undefined, { key: ADMIN_KEY })).status).toBe(401);
  });
});

describe("API keys", () => {
  it("answers 401 at once for a revoked key, and never lists the key itself", async () => {
    const created = await t.api("POST", "/v1/keys", { name: "temporary" });
    expect(created.status).toBe(201);
    const key = created.body.key;
    expect((await t.api("GET", "/v1/tasks", undefined, { key })).status).toBe(200);
    const list = await t.api("GET", "/v1/keys");
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(list.body.keys.map((k: { key_id: string }) => k.key_id)).toContain(created.body.key_id);
    expect((await t.api("DELETE", `/v1/keys/${created.body.key_id}`)).status).toBe(204);
    const after = await t.api("GET", "/v1/tasks", undefined, { key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("unauthorized");
  });
});
