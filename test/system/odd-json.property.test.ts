/**
 * Property tests over HTTP: arbitrary JSON at the routes that take a body,
 * including the shapes that used to answer 500 (keys such as `__proto__`, deep
 * nesting, values shaped like the store's blob references, inputs and plans of
 * every kind). Whatever the body, the answer is never a 5xx.
 */
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack({ env: { STACKVM_MAX_PLAN_UPDATES: "0" } });

/** Keys that routes read, and keys that break naive code. */
const key = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "$blob",
    "size",
    "$value",
    "plan",
    "inputs",
    "goal",
    "metadata",
    "final_answer",
    "seq_no",
    "type",
    "parameters",
    "name",
    "cron",
  ),
  fc.string({ maxLength: 8 }),
);

const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1, 1e21, "", "${x}", "${final_answer}"),
    fc.string({ maxLength: 20 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.array(tie("json"), { maxLength: 4 }),
    fc.dictionary(key, tie("json"), { maxKeys: 4 }),
    fc.constant({ $blob: "0".repeat(64), size: 10 }),
  ),
}));

/** A value wrapped in `levels` objects or arrays (deep nesting, up to past the limit). */
const deep = fc
  .tuple(json, fc.integer({ min: 0, max: 60 }), fc.boolean())
  .map(([value, levels, arrays]) => {
    let out: unknown = value;
    for (let i = 0; i < levels; i++) out = arrays ? [out] : { a: out };
    return out;
  });

/** Any value where a route takes user data: JSON of every kind, or deeply nested. */
const odd = fc.oneof(json, deep);
const oddRecord = fc.dictionary(key, odd, { maxKeys: 3 });

/** A plan that passes validation around the odd values it carries. */
const plan = fc.tuple(oddRecord, odd).map(([values, answer]) => [
  { seq_no: 0, type: "assign", parameters: { ...values, x: 1 } },
  { seq_no: 1, type: "assign", parameters: { final_answer: answer } },
]);

/** Bodies that pass each route's schema as far as possible, with odd values in them. */
const bodies = {
  task: fc.record(
    { plan, inputs: oddRecord, metadata: oddRecord, response_format: oddRecord },
    { requiredKeys: ["plan"] },
  ),
  trigger: fc.record({ name: fc.constant("fuzz"), plan, response_format: oddRecord }),
  schedule: fc.record(
    {
      name: fc.constant("fuzz"),
      cron: fc.constant("0 9 * * 1"),
      timezone: fc.constant("UTC"),
      plan,
      inputs: oddRecord,
      metadata: oddRecord,
    },
    { requiredKeys: ["name", "cron", "plan"] },
  ),
  any: fc.oneof(json, deep, fc.dictionary(key, deep, { maxKeys: 5 })),
};

let taskId = "";
let head = "";
let hook = { url: "", secret: "" };
beforeAll(async () => {
  const created = await t.api("POST", "/v1/tasks", {
    plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: 1 } }],
  });
  taskId = created.body.task_id;
  await t.waitForTask(taskId);
  head = (await t.api("GET", `/v1/tasks/${taskId}/branches/main`)).body.head;
  const trigger = await t.api("POST", "/v1/triggers", {
    name: "fuzz-hook",
    plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "${payload}" } }],
  });
  hook = { url: trigger.body.url, secret: trigger.body.secret };
});

/** Runs the property: the route answers below 500 for every body. */
async function neverFails(
  method: string,
  path: () => string,
  body: fc.Arbitrary<unknown>,
  headers: (raw: string) => Record<string, string> = () => ({}),
) {
  await fc.assert(
    fc.asyncProperty(body, async (value) => {
      const raw = JSON.stringify(value) ?? "null";
      const res = await t.api(method, path(), undefined, { raw, headers: headers(raw) });
      if (res.status >= 500) throw new Error(`${res.status} for ${raw.slice(0, 300)}`);
      // A task it started reads back too, and so does the task list.
      if (typeof res.body?.task_id === "string") {
        const read = await t.api("GET", `/v1/tasks/${res.body.task_id}`);
        if (read.status >= 500) throw new Error(`GET answered ${read.status} after ${raw}`);
      }
    }),
    { numRuns: 60 },
  );
}

/** Standard Webhooks headers of a delivery of `raw` to the fuzz trigger. */
function signed(raw: string): Record<string, string> {
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  const at = new Date();
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(hook.secret).sign(id, at, raw),
  };
}

afterAll(async () => {
  // Every task the bodies started, whatever it became, is listed without an error.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect((await t.api("GET", "/v1/tasks?limit=100")).status).toBe(200);
});

describe("any JSON body", () => {
  it.each([
    ["POST", "/v1/tasks", () => "/v1/tasks", bodies.task],
    ["POST", "/v1/tasks (any JSON)", () => "/v1/tasks", bodies.any],
    ["POST", "/v1/triggers", () => "/v1/triggers", bodies.trigger],
    ["POST", "/v1/schedules", () => "/v1/schedules", bodies.schedule],
    ["PUT", "/v1/namespaces/fuzz", () => "/v1/namespaces/fuzz", bodies.any],
    ["POST", "/v1/tasks/{id}/branches", () => `/v1/tasks/${taskId}/branches`, bodies.any],
  ])(
    "%s %s never answers 5xx",
    async (method, _label, path, body) => {
      await neverFails(method, path, body as fc.Arbitrary<unknown>);
    },
    120_000,
  );

  it("POST /v1/tasks/{id}/branches never answers 5xx for a fork with an odd plan", async () => {
    const fork = fc.record({ from_commit: fc.constant(head), plan });
    await neverFails("POST", () => `/v1/tasks/${taskId}/branches`, fork);
  }, 120_000);

  it("a signed trigger delivery never answers 5xx, whatever its payload", async () => {
    await neverFails("POST", () => new URL(hook.url).pathname, bodies.any, signed);
  }, 120_000);
});
