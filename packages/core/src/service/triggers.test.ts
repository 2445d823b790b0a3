import { describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { newWebhookSecret, webhookHeaders } from "../webhooks/signature";
import { CreateTriggerInput } from "./triggers";

const encode = (text: string) => new TextEncoder().encode(text);

async function setup(options: Parameters<typeof integrateSystem>[0] = {}) {
  const sys = integrateSystem(options);
  const { trigger, secret } = await sys.triggers.create(
    "acme",
    CreateTriggerInput.parse({
      name: "orders",
      goal: "Thank ${payload.customer.name} for order ${payload.id}",
    }),
  );
  const now = () => Math.floor(sys.clock.now() / 1000);
  const send = (body: string, id = "msg_1", headers = webhookHeaders(secret, id, now(), body)) =>
    sys.triggers.deliver(trigger.trigger_id, headers, encode(body));
  return { sys, trigger, secret, send, now };
}

const order = JSON.stringify({ id: 42, customer: { name: "Ada" } });

describe("TriggerService", () => {
  it("starts a task from a valid delivery, with the payload in the goal and as input", async () => {
    const { sys, trigger, send } = await setup();
    const { task_id, replayed } = await send(order);
    expect(replayed).toBe(false);
    const task = await sys.tasks.get("acme", task_id);
    expect(task.goal).toBe("Thank Ada for order 42");
    expect(task.metadata).toEqual({ trigger_id: trigger.trigger_id, webhook_id: "msg_1" });
    const main = await sys.store.getBranch("acme", task_id, "main");
    expect(main?.config.inputs).toEqual({ payload: { id: 42, customer: { name: "Ada" } } });
  });

  it("answers a second delivery of the same webhook-id with the first task and starts nothing", async () => {
    const { sys, send } = await setup();
    const first = await send(order);
    const again = await send(order);
    expect(again).toEqual({ task_id: first.task_id, replayed: true });
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(1);
    await sys.tasks.delete("acme", first.task_id);
    expect((await send(order)).replayed).toBe(true);
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(0);
  });

  it("refuses a delivery signed with another secret with a 401 and starts nothing", async () => {
    const { sys, send, now } = await setup();
    const headers = webhookHeaders(newWebhookSecret(), "msg_x", now(), order);
    await expect(send(order, "msg_x", headers)).rejects.toThrow(
      expect.objectContaining({ kind: "unauthorized" }),
    );
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(0);
  });

  it("refuses a changed body, a missing header and an old timestamp, starting nothing", async () => {
    const { sys, secret, trigger, now } = await setup();
    const signed = webhookHeaders(secret, "msg_1", now(), order);
    const { "webhook-timestamp": _, ...missing } = signed;
    const attempts = [
      () => sys.triggers.deliver(trigger.trigger_id, signed, encode(`${order} `)),
      () => sys.triggers.deliver(trigger.trigger_id, missing, encode(order)),
      () =>
        sys.triggers.deliver(
          trigger.trigger_id,
          webhookHeaders(secret, "msg_1", now() - 360, order),
          encode(order),
        ),
    ];
    for (const attempt of attempts) {
      await expect(attempt()).rejects.toThrow(expect.objectContaining({ kind: "unauthorized" }));
    }
    expect((await sys.tasks.list("acme", { limit: 10 })).tasks).toHaveLength(0);
  });

  it("counts bad signatures apart: past the tenant's rate of them a signed delivery still starts its task", async () => {
    const { send, now } = await setup({ quotas: { requests_per_second: 3 } });
    const forged = (i: number) =>
      send(order, `msg_f${i}`, webhookHeaders(newWebhookSecret(), `msg_f${i}`, now(), order));
    for (let i = 0; i < 5; i++) await forged(i).catch(() => undefined);
    await expect(send(order)).resolves.toMatchObject({ replayed: false });
  });

  it("answers 429 to bad signatures past requests_per_second of them in one second", async () => {
    const { send, now } = await setup({ quotas: { requests_per_second: 3 } });
    const codes = [];
    for (let i = 0; i < 5; i++) {
      const headers = webhookHeaders(newWebhookSecret(), `msg_f${i}`, now(), order);
      codes.push(await send(order, `msg_f${i}`, headers).catch((e: { code: string }) => e.code));
    }
    expect(codes).toEqual([
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "bad_signatures_rate_limited",
      "bad_signatures_rate_limited",
    ]);
  });

  it("answers 422 when the payload lacks a field the goal reads", async () => {
    const { send } = await setup();
    await expect(send(JSON.stringify({ id: 1 }))).rejects.toThrow(/does not have/);
  });

  it("answers 404 for an unknown or deleted trigger", async () => {
    const { sys, trigger, send } = await setup();
    await sys.triggers.delete("acme", trigger.trigger_id);
    await expect(send(order)).rejects.toThrow(expect.objectContaining({ kind: "not_found" }));
    await expect(sys.triggers.get("acme", trigger.trigger_id)).rejects.toThrow(/does not exist/);
  });

  it("refuses a goal that reads anything but the payload", async () => {
    const sys = integrateSystem();
    await expect(
      sys.triggers.create("acme", CreateTriggerInput.parse({ name: "x", goal: "Use ${secret}" })),
    ).rejects.toThrow(/only reference the delivered JSON/);
  });

  it("gives a plan the payload as its input variable", async () => {
    const sys = integrateSystem();
    const { trigger, secret } = await sys.triggers.create(
      "acme",
      CreateTriggerInput.parse({
        name: "echo",
        plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "${payload.text}" } }],
      }),
    );
    const body = JSON.stringify({ text: "hello" });
    const now = Math.floor(sys.clock.now() / 1000);
    const { task_id } = await sys.triggers.deliver(
      trigger.trigger_id,
      webhookHeaders(secret, "msg_9", now, body),
      encode(body),
    );
    await sys.drain();
    expect((await sys.tasks.get("acme", task_id)).final_answer).toBe("hello");
  });
});
