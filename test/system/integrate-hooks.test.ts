/**
 * Incoming webhooks over HTTP, as a sender would deliver them: signed with the
 * Standard Webhooks reference library under the trigger's secret.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
  t.llm.on("plan", () => ({
    reasoning: "answer at once",
    plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "thanked" } }],
  }));
});
afterAll(async () => {
  await t?.stop();
});

/** Sends a delivery the way a Standard Webhooks sender does. */
async function deliver(
  url: string,
  secret: string,
  body: string,
  options: { id?: string; at?: Date; headers?: Record<string, string> } = {},
) {
  const id = options.id ?? `msg_${Math.random().toString(36).slice(2)}`;
  const at = options.at ?? new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
    ...options.headers,
  };
  const response = await fetch(url, { method: "POST", headers, body });
  return { status: response.status, body: await response.json() };
}

async function taskCount(): Promise<number> {
  return (await t.api("GET", "/v1/tasks?limit=100")).body.tasks.length;
}

describe("incoming webhooks (triggers)", () => {
  it("creates a trigger whose URL starts one task per delivery with the payload", async () => {
    const created = await t.api("POST", "/v1/triggers", {
      name: "orders",
      goal: "Thank ${payload.customer.name} for order ${payload.order_id}",
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.body.url).toBe(`${t.url}/v1/hooks/${created.body.trigger_id}`);
    const read = await t.api("GET", `/v1/triggers/${created.body.trigger_id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");

    const payload = { order_id: "A-1001", customer: { name: "Ada" } };
    const delivered = await deliver(
      created.body.url,
      created.body.secret,
      JSON.stringify(payload),
      {
        id: "msg_first",
      },
    );
    expect(delivered.status).toBe(202);
    const task = await t.waitForTask(delivered.body.task_id);
    expect(task).toMatchObject({
      status: "completed",
      goal: "Thank Ada for order A-1001",
      metadata: { trigger_id: created.body.trigger_id, webhook_id: "msg_first" },
    });
    const state = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main`);
    expect(state.body.state.variables.payload).toEqual(payload);
  });

  it("answers a second delivery of the same webhook-id with the first task and starts nothing", async () => {
    const { body: trigger } = await t.api("POST", "/v1/triggers", { name: "dup", goal: "Say hi" });
    const body = JSON.stringify({ n: 1 });
    const before = await taskCount();
    const first = await deliver(trigger.url, trigger.secret, body, { id: "msg_dup" });
    const second = await deliver(trigger.url, trigger.secret, body, { id: "msg_dup" });
    expect(first.status).toBe(202);
    expect(second).toEqual({ status: 200, body: { task_id: first.body.task_id } });
    expect(await taskCount()).toBe(before + 1);
  });

  it("answers 401 and starts nothing for a wrong secret, a changed body, a missing header or a timestamp 6 minutes old", async () => {
    const { body: trigger } = await t.api("POST", "/v1/triggers", {
      name: "strict",
      goal: "Say hi",
    });
    const other = (await t.api("POST", "/v1/triggers", { name: "other", goal: "x" })).body.secret;
    const body = JSON.stringify({ n: 1 });
    const before = await taskCount();
    const signed = (id: string) => ({
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      "webhook-signature": new Webhook(trigger.secret).sign(id, new Date(), body),
    });
    const answers = [
      await deliver(trigger.url, other, body),
      (
        await fetch(trigger.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...signed("msg_changed") },
          body: JSON.stringify({ n: 2 }),
        })
      ).status,
      (
        await fetch(trigger.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": "msg_missing",
            "webhook-timestamp": signed("msg_missing")["webhook-timestamp"],
          },
          body,
        })
      ).status,
      await deliver(trigger.url, trigger.secret, body, { at: new Date(Date.now() - 6 * 60_000) }),
    ];
    const statuses = answers.map((a) => (typeof a === "number" ? a : a.status));
    expect(statuses).toEqual([401, 401, 401, 401]);
    expect((answers[0] as { body: { error: { code: string } } }).body.error.code).toBe(
      "unauthorized",
    );
    expect(await taskCount()).toBe(before);
  });

  it("limits forged deliveries apart: a flood of them answers 429 and leaves the tenant's rate to signed ones", async () => {
    const key = (
      await t.api("POST", "/v1/admin/tenants/flooded/keys", { name: "ci" }, { key: ADMIN_KEY })
    ).body.key;
    const quotas = { requests_per_second: 5 };
    await t.api("PUT", "/v1/admin/tenants/flooded/quotas", quotas, { key: ADMIN_KEY });
    const { body: trigger } = await t.api(
      "POST",
      "/v1/triggers",
      { name: "target", goal: "Say hi" },
      { key },
    );
    const forger = (await t.api("POST", "/v1/triggers", { name: "forger", goal: "x" })).body.secret;
    const body = JSON.stringify({ n: 1 });
    const forged = await Promise.all(
      Array.from({ length: 20 }, () => deliver(trigger.url, forger, body)),
    );
    const signed = await deliver(trigger.url, trigger.secret, body);
    expect(signed.status).toBe(202);
    const statuses = new Set(forged.map((a) => a.status));
    expect(statuses).toEqual(new Set([401, 429]));
    expect(forged.find((a) => a.status === 429)?.body.error.code).toBe(
      "bad_signatures_rate_limited",
    );
  });

  it("answers 404 for a deleted trigger, and lists only live ones", async () => {
    const { body: trigger } = await t.api("POST", "/v1/triggers", { name: "gone", goal: "x" });
    expect((await t.api("DELETE", `/v1/triggers/${trigger.trigger_id}`)).status).toBe(204);
    expect((await deliver(trigger.url, trigger.secret, "{}")).status).toBe(404);
    expect((await t.api("GET", `/v1/triggers/${trigger.trigger_id}`)).status).toBe(404);
    const list = await t.api("GET", "/v1/triggers");
    expect(list.body.triggers.map((x: { trigger_id: string }) => x.trigger_id)).not.toContain(
      trigger.trigger_id,
    );
  });

  // Last: the server answers before reading the whole body and closes that connection.
  it("answers 413 to a body over the limit", async () => {
    const { body: trigger } = await t.api("POST", "/v1/triggers", { name: "big", goal: "x" });
    const body = JSON.stringify({ blob: "x".repeat(300 * 1024) });
    const answer = await deliver(trigger.url, trigger.secret, body);
    expect(answer.status).toBe(413);
    expect(answer.body.error.code).toBe("too_large");
  });
});
