import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { CreateTaskInput } from "./task-input";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 that answers the given statuses in turn (the last one after). */
async function receiver(statuses: number[]) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("outgoing webhooks", () => {
  it("retries a failing receiver with backoff, the same webhook-id and a valid signature each time, and records every attempt", async () => {
    const sys = integrateSystem({ webhookBackoffSeconds: 10 });
    const hook = await receiver([500, 503, 200]);
    close = hook.close;
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan, webhook_url: hook.url }),
    );
    await sys.drain();
    expect(hook.received).toHaveLength(1);
    sys.clock.advance(10_000);
    await sys.drain();
    expect(hook.received).toHaveLength(2);
    // The second wait is four times the first.
    sys.clock.advance(39_000);
    await sys.drain();
    expect(hook.received).toHaveLength(2);
    sys.clock.advance(1_000);
    await sys.drain();
    expect(hook.received).toHaveLength(3);

    const secret = await sys.webhooks.secret("acme");
    const ids = new Set(hook.received.map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    for (const r of hook.received) {
      const reference = new Webhook(secret);
      const headers = {
        "webhook-id": String(r.headers["webhook-id"]),
        "webhook-timestamp": String(r.headers["webhook-timestamp"]),
        "webhook-signature": String(r.headers["webhook-signature"]),
      };
      // The reference library checks the timestamp against the real clock: sign-check only.
      expect(
        reference.sign(
          headers["webhook-id"],
          new Date(Number(headers["webhook-timestamp"]) * 1000),
          r.body,
        ),
      ).toBe(headers["webhook-signature"]);
    }
    const body = JSON.parse(hook.received[0]!.body);
    expect(body).toMatchObject({
      type: "task.completed",
      data: { task_id: task.task_id, final_answer: "done" },
    });

    const shown = await sys.tasks.get("acme", task.task_id);
    expect(shown.webhook?.url).toBe(hook.url);
    expect(shown.webhook?.deliveries).toHaveLength(1);
    const delivery = shown.webhook!.deliveries[0]!;
    expect(delivery.status).toBe("delivered");
    expect(delivery.attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
  });

  it("records a delivery that failed every attempt as failed", async () => {
    const sys = integrateSystem({ webhookBackoffSeconds: 1, webhookMaxAttempts: 2 });
    const hook = await receiver([500]);
    close = hook.close;
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan, webhook_url: hook.url }),
    );
    await sys.drain();
    sys.clock.advance(1_000);
    await sys.drain();
    sys.clock.advance(60_000);
    await sys.drain();
    expect(hook.received).toHaveLength(2);
    const delivery = (await sys.tasks.get("acme", task.task_id)).webhook!.deliveries[0]!;
    expect(delivery.status).toBe("failed");
    expect(sys.queue.deadLetters).toHaveLength(0);
  });

  it("fails a delivery at once, naming the cause, when the receiver's name resolves to a private address", async () => {
    // Accepted when the task was created (the name resolved elsewhere then); now it
    // resolves to 10.0.0.5, which the guard refuses: no retry can connect.
    const sys = integrateSystem({
      webhookBackoffSeconds: 1,
      resolve: async () => [{ address: "10.0.0.5", family: 4 }],
    });
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan, webhook_url: "https://hooks.moved.example/x" }),
    );
    await sys.drain();
    for (let i = 0; i < 4; i++) {
      sys.clock.advance(3_600_000);
      await sys.drain();
    }
    const delivery = (await sys.tasks.get("acme", task.task_id)).webhook!.deliveries[0]!;
    expect(delivery.status).toBe("failed");
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]!.error).toMatch(/10\.0\.0\.5.*private address/);
    expect(sys.queue.deadLetters).toHaveLength(0);
  });

  it.each([307, 302, 308])(
    "follows no %i redirect at delivery: the place it points at gets nothing, and the attempt says why",
    async (status) => {
      const sys = integrateSystem({ webhookBackoffSeconds: 1, webhookMaxAttempts: 1 });
      // The place a redirect would lead to: on loopback, which this system has opened.
      const inside = await receiver([200]);
      const bouncer = createServer((_req, res) => {
        res.writeHead(status, { location: `${inside.url}/internal-admin` });
        res.end();
      });
      await new Promise<void>((r) => bouncer.listen(0, "127.0.0.1", r));
      close = async () => {
        await inside.close();
        await new Promise<void>((r) => bouncer.close(() => r()));
      };
      const url = `http://127.0.0.1:${(bouncer.address() as AddressInfo).port}/hook`;
      const { task } = await sys.tasks.create(
        "acme",
        CreateTaskInput.parse({ plan, webhook_url: url }),
      );
      await sys.drain();
      expect(inside.received).toHaveLength(0);
      const delivery = (await sys.tasks.get("acme", task.task_id)).webhook!.deliveries[0]!;
      expect(delivery.status).toBe("failed");
      expect(delivery.attempts[0]!.error).toMatch(/redirect/);
    },
  );

  it("still delivers when the worker dies between the terminal commit and queueing the delivery", async () => {
    let calls = 0;
    const sys = integrateSystem({
      beforeHooks: async () => {
        calls++;
        if (calls === 1) throw new Error("worker killed");
      },
    });
    const hook = await receiver([200]);
    close = hook.close;
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan, webhook_url: hook.url }),
    );
    // The memory queue hands a failed message out again at once, as SQS does after
    // the visibility timeout: the step finds its commit made and the head moved.
    const result = await sys.drain();
    expect(result.errors).toEqual([expect.objectContaining({ message: "worker killed" })]);
    expect(calls).toBe(2);
    expect(hook.received).toHaveLength(1);
    expect((await sys.tasks.get("acme", task.task_id)).webhook?.deliveries[0]?.status).toBe(
      "delivered",
    );
  });

  it("sends nothing for a task without webhook_url, and makes one secret per tenant", async () => {
    const sys = integrateSystem();
    await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    expect(sys.queue.sent.filter((m) => (m.body as { kind: string }).kind === "webhook")).toEqual(
      [],
    );
    const [a, b] = await Promise.all([sys.webhooks.secret("acme"), sys.webhooks.secret("acme")]);
    expect(a).toBe(b);
    expect(a).toMatch(/^whsec_/);
    expect(await sys.webhooks.secret("other")).not.toBe(a);
  });
});
