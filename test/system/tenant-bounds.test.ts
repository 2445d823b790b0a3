/**
 * One tenant cannot freeze the others or write through the routes without a key
 * (issue "No tenant freezes, starves or overspends the others"). A second tenant
 * attacks with hostile JSON Schemas and forged resume URLs; the first tenant's
 * requests keep answering. Bounds are generous (a loaded machine), and what they
 * guard against took hours: `^(a+)+$` doubles its time with each character.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let attacker: string;
/** Webhook bodies the tasks sent to the local receiver. */
const received: any[] = [];
let server: Server;
let receiver = "";

/** Far above a loaded machine's answer, far below a backtracking pattern's. */
const BOUND_MS = 10_000;

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      received.push(JSON.parse(text));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  // One source may send 10 anonymous requests a second here (50 by default).
  t = await startTestStack({ env: { STACKVM_ANONYMOUS_RPS: "10" } });
  const key = await t.api(
    "POST",
    "/v1/admin/tenants/mallory/keys",
    { name: "m" },
    { key: ADMIN_KEY },
  );
  attacker = key.body.key;
  const ns = await t.api(
    "PUT",
    "/v1/namespaces/hostile",
    { allowed_hosts: ["tools.example.com"] },
    { key: attacker },
  );
  expect(ns.status).toBeLessThan(300);
});
afterAll(async () => {
  await t?.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const asAttacker = (method: string, path: string, body?: unknown) =>
  t.api(method, path, body, { key: attacker });

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

describe("tenant-supplied JSON Schemas", () => {
  it("checks a catastrophic pattern in linear time while another tenant's requests answer", async () => {
    const tool = await asAttacker("POST", "/v1/namespaces/hostile/http-tools", {
      name: "redos",
      description: "A pattern that backtracks",
      url: "https://tools.example.com/redos",
      input_schema: {
        type: "object",
        properties: { s: { type: "string", pattern: "^(a+)+$" } },
        required: ["s"],
      },
    });
    expect(tool.status).toBe(201);
    // 31 characters took 13 s with a backtracking engine; 60 would take days.
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "redos",
          tool_params: { s: `${"a".repeat(60)}!` },
          output_vars: "out",
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${out}" } },
    ];
    const [attack, victim] = await Promise.all([
      timed(() => asAttacker("POST", "/v1/plans/validate", { plan, namespace: "hostile" })),
      timed(() => t.api("GET", "/v1/tasks?limit=1")),
    ]);
    expect(attack.value.status).toBe(200);
    expect(attack.value.body.valid).toBe(false);
    expect(JSON.stringify(attack.value.body.problems)).toContain("must match pattern");
    expect(attack.ms).toBeLessThan(BOUND_MS);
    expect(victim.value.status).toBe(200);
    expect(victim.ms).toBeLessThan(BOUND_MS);
  });

  it.each([
    ["a self-reference", { type: "object", $ref: "#" }, "leads back to itself"],
    [
      "an anyOf chain that doubles at each level",
      {
        type: "object",
        properties: { x: { $ref: "#/$defs/l0" } },
        $defs: Object.fromEntries([
          ...Array.from({ length: 19 }, (_, i) => [
            `l${i}`,
            { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] },
          ]),
          ["l19", { type: "string" }],
        ]),
      },
      "written out in place",
    ],
    [
      "a backreference",
      { type: "object", properties: { s: { type: "string", pattern: "^(a+)\\1$" } } },
      "linear time",
    ],
  ])("refuses %s at registration with 422 and stores nothing", async (_what, schema, reason) => {
    const refused = await asAttacker("POST", "/v1/namespaces/hostile/http-tools", {
      name: "bad",
      description: "A schema out of bounds",
      url: "https://tools.example.com/bad",
      input_schema: schema,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("invalid_schema");
    expect(refused.body.error.message).toContain(reason);
    const tools = await asAttacker("GET", "/v1/tools?namespace=hostile");
    expect(JSON.stringify(tools.body)).not.toContain('"bad"');
  });

  it("refuses an ask_human schema out of bounds when the plan is checked", async () => {
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "ask_human",
          tool_params: { question: "Name?", schema: { type: "object", $ref: "#" } },
          output_vars: "name",
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${name}" } },
    ];
    const checked = await asAttacker("POST", "/v1/plans/validate", { plan });
    expect(checked.status).toBe(200);
    expect(checked.body.valid).toBe(false);
    expect(JSON.stringify(checked.body.problems)).toContain("leads back to itself");
  });
});

describe("routes without an API key", () => {
  it("checks a hostile answer on the resume URL in linear time, and the URL still takes a good one", async () => {
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "ask_human",
          tool_params: { question: "Code?", schema: { type: "string", pattern: "^(a+)+$" } },
          output_vars: "code",
        },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${code}" } },
    ];
    const created = await asAttacker("POST", "/v1/tasks", { plan, webhook_url: receiver });
    expect(created.status).toBe(202);
    const taskId = created.body.task_id;
    const deadline = Date.now() + 60_000;
    let hook: any;
    while (!hook && Date.now() < deadline) {
      hook = received.find((r) => r.type === "task.waiting" && r.data.task_id === taskId);
      if (!hook) await new Promise((r) => setTimeout(r, 50));
    }
    expect(hook?.resume_url).toBeDefined();
    const path = (hook.resume_url as string).slice(t.url.length);
    const [attack, victim] = await Promise.all([
      timed(() => t.api("POST", path, { answer: `${"a".repeat(60)}!` }, { key: null })),
      timed(() => t.api("GET", "/v1/tasks?limit=1")),
    ]);
    expect(attack.value.status).toBe(422);
    expect(attack.value.body.error.code).toBe("answer_does_not_match");
    expect(attack.ms).toBeLessThan(BOUND_MS);
    expect(victim.value.status).toBe(200);
    expect(victim.ms).toBeLessThan(BOUND_MS);
    const good = await t.api("POST", path, { answer: "aaa" }, { key: null });
    expect(good.status).toBe(200);
    const done = await t.waitForTask(taskId, { key: attacker });
    expect(done.final_answer).toBe("aaa");
  });

  it("writes nothing for forged resume tokens and limits one source's rate", async () => {
    const tenants = Array.from({ length: 60 }, (_, i) => `forged${i}`);
    // Sent at once: at least 30 of the 60 fall in one second, past the 10 allowed.
    const answers = await Promise.all(
      tenants.map((tenant) => {
        const payload = Buffer.from(
          JSON.stringify({ t: tenant, k: "tsk_x", b: "main", w: "w".repeat(24), e: 4102444800 }),
        ).toString("base64url");
        return t.api(
          "POST",
          `/v1/resume/rsm_${payload}.${"A".repeat(43)}`,
          { answer: true },
          {
            key: null,
          },
        );
      }),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 404 && s !== 429)).toEqual([]);
    expect(statuses).toContain(404);
    expect(statuses).toContain(429);
    const limited = answers.find((a) => a.status === 429);
    expect(limited?.headers.get("retry-after")).not.toBeNull();
    expect(limited?.body.error.code).toBe("source_rate_limited");
    const items = t.stack.system.ports.items;
    for (const tenant of tenants) {
      expect(await items.get({ pk: `T#${tenant}`, sk: "WEBHOOK_SECRET" })).toBeNull();
    }
  });
});
