/**
 * What the API does with requests it refuses and with odd input, over HTTP
 * (issue 13): a refused request leaves nothing behind, no JSON shape answers a
 * 500, a user value never reads as an internal reference, and a step over the
 * output limit fails once with the limit named.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, useTestStack } from "../support/stack";

// No plan updates: a failed step ends its branch, so no test needs the LLM.
const t = useTestStack({ env: { STACKVM_MAX_PLAN_UPDATES: "0" } });

const answer = (value: unknown) => [
  { seq_no: 0, type: "assign", parameters: { final_answer: value } },
];
/** JSON text of `{"a": {"a": … 1 …}}`, `levels` objects deep, built as text. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

/** A key of a fresh tenant that may run one task at a time. */
async function oneSlotTenant(tenant: string): Promise<string> {
  const key = await t.api(
    "POST",
    `/v1/admin/tenants/${tenant}/keys`,
    { name: "ci" },
    {
      key: ADMIN_KEY,
    },
  );
  const quotas = { max_running_tasks: 1 };
  await t.api("PUT", `/v1/admin/tenants/${tenant}/quotas`, quotas, { key: ADMIN_KEY });
  return key.body.key;
}

describe("a refused task", () => {
  it("answers 413 naming the plan's size and limit, and leaves no task and no held slot", async () => {
    const key = await oneSlotTenant("refused");
    const plan = [
      { seq_no: 0, type: "assign", parameters: { big: "x".repeat(900_000) } },
      { seq_no: 1, type: "assign", parameters: { final_answer: 1 } },
    ];
    for (let i = 0; i < 3; i++) {
      const refused = await t.api("POST", "/v1/tasks", { plan }, { key });
      expect(refused.status).toBe(413);
      expect(refused.body.error.message).toMatch(
        /^the plan is 9\d{5} bytes as JSON, over the limit of 262144 bytes/,
      );
      expect(refused.body.error.message).not.toMatch(/T#|B#main|K#/);
    }
    expect((await t.api("GET", "/v1/tasks", undefined, { key })).body.tasks).toEqual([]);
    // The tenant's one slot is free: the README's plan runs.
    const ok = await t.api("POST", "/v1/tasks", { plan: answer(42) }, { key });
    expect(ok.status).toBe(202);
    expect(await t.waitForTask(ok.body.task_id, { key, timeoutMs: 10_000 })).toMatchObject({
      status: "completed",
      final_answer: 42,
    });
  });
});

describe("odd JSON", () => {
  it.each([
    ["inputs", `{"plan": ${JSON.stringify(answer(1))}, "inputs": {"__proto__": {"a": 1}}}`],
    [
      "plan parameters",
      '{"plan": [{"seq_no": 0, "type": "assign", "parameters": {"x": {"__proto__": 1}, "final_answer": 1}}]}',
    ],
    ["metadata", `{"goal": "g", "metadata": {"constructor": {"prototype": 1}}}`],
  ])("refuses a forbidden key in %s with 400 and its path", async (_where, raw) => {
    const res = await t.api("POST", "/v1/tasks", undefined, { raw });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("forbidden_key");
  });

  it("refuses a forbidden key in a signed trigger payload with 400, and starts no task", async () => {
    const created = await t.api("POST", "/v1/triggers", { name: "proto", goal: "g" });
    const body = '{"order": {"__proto__": {"admin": true}}}';
    const id = "msg_proto";
    const at = new Date();
    const response = await fetch(created.body.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(created.body.secret).sign(id, at, body),
      },
      body,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.code).toBe("forbidden_key");
  });

  it.each([
    [5_000, 400],
    [1_000, 400],
    [32, 400],
    [31, 202],
  ])("answers metadata nested %i levels with %i", async (levels, status) => {
    const raw = `{"plan": ${JSON.stringify(answer(1))}, "metadata": ${nested(levels)}}`;
    const res = await t.api("POST", "/v1/tasks", undefined, { raw });
    expect(res.status).toBe(status);
    if (status === 400) expect(res.body.error.code).toBe("too_deep");
  });
});

describe("a value shaped like a blob reference", () => {
  it("is a final answer like any other: the task and the task list answer 200", async () => {
    const forged = { $blob: "0".repeat(64), size: 10 };
    const created = await t.api("POST", "/v1/tasks", { plan: answer(forged) });
    const done = await t.waitForTask(created.body.task_id, { timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: "completed", final_answer: forged });
    const list = await t.api("GET", "/v1/tasks?limit=100");
    expect(list.status).toBe(200);
  });
});

describe("reference-shaped values from every source stay the user's values", () => {
  // Each shape the store reads: a blob reference (present-looking and absent
  // hashes) and the escape itself.
  const shapes = [
    { $blob: "0".repeat(64), size: 10 },
    { $blob: "not-a-hash", size: 1 },
    { $value: { $blob: "f".repeat(64), size: 3 } },
  ];

  /** Runs a plan to its end and checks the answer and the task list. */
  async function answers(plan: unknown[], expected: unknown, body: Record<string, unknown> = {}) {
    const created = await t.api("POST", "/v1/tasks", { plan, ...body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await t.waitForTask(created.body.task_id, { timeoutMs: 30_000 });
    expect(done, done.error).toMatchObject({ status: "completed", final_answer: expected });
    const state = await t.api("GET", `/v1/tasks/${created.body.task_id}/branches/main/commits`);
    expect(state.status).toBe(200);
    expect((await t.api("GET", "/v1/tasks?limit=100")).status).toBe(200);
  }

  it("from an http_request answer", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(shapes));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const namespace = { allowed_tools: ["http_request"], allowed_hosts: ["127.0.0.1"] };
      expect((await t.api("PUT", "/v1/namespaces/forged", namespace)).status).toBe(200);
      const plan = [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "http_request",
            tool_params: { url: `http://127.0.0.1:${port}/shapes` },
            output_vars: ["page"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { first: "${page.body.0}" } },
        { seq_no: 2, type: "assign", parameters: { final_answer: "${page.body}" } },
      ];
      await answers(plan, shapes, { namespace: "forged" });
    } finally {
      server.close();
    }
  });

  it("from a run_code result", async () => {
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "run_code",
          tool_params: { language: "javascript", code: `return ${JSON.stringify(shapes)}` },
          output_vars: ["out"],
        },
      },
      { seq_no: 1, type: "assign", parameters: { first: "${out.0}" } },
      { seq_no: 2, type: "assign", parameters: { final_answer: "${out}" } },
    ];
    await answers(plan, shapes);
  });

  it("from a trigger's payload", async () => {
    const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "${payload}" } }];
    const trigger = (await t.api("POST", "/v1/triggers", { name: "forged", plan })).body;
    const body = JSON.stringify({ shapes });
    const id = "msg_forged_shapes";
    const at = new Date();
    const delivered = await fetch(trigger.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(trigger.secret).sign(id, at, body),
      },
      body,
    });
    expect(delivered.status).toBe(202);
    const { task_id } = (await delivered.json()) as { task_id: string };
    const done = await t.waitForTask(task_id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: "completed", final_answer: { shapes } });
    expect((await t.api("GET", "/v1/tasks?limit=100")).status).toBe(200);
  });
});

describe("a step over the output limit", () => {
  it("fails once with the limit named instead of retrying to the dead-letter queue", async () => {
    const plan: unknown[] = [{ seq_no: 0, type: "assign", parameters: { x: "a".repeat(1024) } }];
    for (let i = 1; i <= 13; i++) {
      plan.push({ seq_no: i, type: "assign", parameters: { x: "${x}${x}" } });
    }
    plan.push({ seq_no: 14, type: "assign", parameters: { final_answer: "done" } });
    const created = await t.api("POST", "/v1/tasks", { plan });
    const done = await t.waitForTask(created.body.task_id, { timeoutMs: 20_000 });
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/over the limit of 5242880 bytes per variable/);
    const log = await t.api("GET", `/v1/tasks/${created.body.task_id}/branches/main/commits`);
    expect(log.body.commits.filter((c: { type: string }) => c.type === "error")).toHaveLength(1);
  });
});
