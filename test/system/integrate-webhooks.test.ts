/**
 * Outgoing webhooks over HTTP: a receiver on this machine (loopback is allowed in
 * local mode) gets one signed POST per terminal status, retried with backoff,
 * and every attempt shows on the task.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { BranchRecord } from "@stackvm/core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** Host names that resolve to addresses delivery refuses. */
const NAMES: Record<string, string> = {
  "hooks.internal.test": "10.0.0.5",
  "meta.internal.test": "169.254.169.254",
};

let t: TestStack;
let server: Server;
let base: string;
const received = new Map<string, Received[]>();
/** Statuses a path answers in turn (the last one again after). */
const script = new Map<string, number[]>();
/** The first terminal hook of a task whose webhook path is /crash dies, as a killed worker would. */
let crashes = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const list = received.get(path) ?? [];
      list.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      received.set(path, list);
      const statuses = script.get(path) ?? [200];
      res.statusCode = statuses[Math.min(list.length - 1, statuses.length - 1)]!;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await startTestStack({
    env: { STACKVM_WEBHOOK_RETRY_BASE_SECONDS: "1" },
    // Names of private receivers, resolved without DNS; the test's receiver is an IP literal.
    resolve: async (host) => {
      const address = NAMES[host];
      if (!address) throw new Error(`ENOTFOUND ${host}`);
      return [{ address, family: 4 }];
    },
    afterTerminal: [
      async (branch: BranchRecord) => {
        if (branch.config.webhook_url?.endsWith("/crash") && crashes === 0) {
          crashes++;
          throw new Error("worker killed between the terminal commit and the delivery");
        }
      },
    ],
  });
});
afterAll(async () => {
  await t?.stop();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];

/** Polls the task until its delivery is no longer pending. */
async function settledDelivery(taskId: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await t.api("GET", `/v1/tasks/${taskId}`);
    const delivery = body.webhook?.deliveries?.[0];
    if (delivery && delivery.status !== "pending") return { task: body, delivery };
    if (Date.now() > deadline) throw new Error(`no delivery settled: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("outgoing webhooks", () => {
  it("retries a receiver that fails twice, with the same webhook-id and a valid signature on each of the three attempts", async () => {
    script.set("/flaky", [500, 503, 200]);
    const created = await t.api("POST", "/v1/tasks", { plan, webhook_url: `${base}/flaky` });
    expect(created.status).toBe(202);
    const { task, delivery } = await settledDelivery(created.body.task_id);

    const attempts = received.get("/flaky")!;
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.headers["webhook-id"])).size).toBe(1);
    const { secret } = (await t.api("GET", "/v1/webhook-secret")).body;
    const verifier = new Webhook(secret);
    for (const attempt of attempts) {
      const payload = verifier.verify(attempt.body, {
        "webhook-id": String(attempt.headers["webhook-id"]),
        "webhook-timestamp": String(attempt.headers["webhook-timestamp"]),
        "webhook-signature": String(attempt.headers["webhook-signature"]),
      });
      expect(payload).toMatchObject({
        type: "task.completed",
        data: { task_id: task.task_id, status: "completed", final_answer: "done" },
      });
    }
    expect(delivery.status).toBe("delivered");
    expect(delivery.webhook_id).toBe(attempts[0]!.headers["webhook-id"]);
    expect(delivery.attempts.map((a: { status: number }) => a.status)).toEqual([500, 503, 200]);
    expect(task.webhook.url).toBe(`${base}/flaky`);
  });

  it("still delivers when the worker dies between the terminal commit and the delivery", async () => {
    const created = await t.api("POST", "/v1/tasks", { plan, webhook_url: `${base}/crash` });
    const { delivery } = await settledDelivery(created.body.task_id);
    expect(crashes).toBe(1);
    expect(delivery.status).toBe("delivered");
    expect(received.get("/crash")).toHaveLength(1);
  });

  it("sends the same secret every time, and refuses a non-loopback http URL", async () => {
    const a = await t.api("GET", "/v1/webhook-secret");
    const b = await t.api("GET", "/v1/webhook-secret");
    expect(a.body.secret).toMatch(/^whsec_/);
    expect(b.body.secret).toBe(a.body.secret);
    const refused = await t.api("POST", "/v1/tasks", {
      plan,
      webhook_url: "http://example.com/hook",
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("bad_webhook_url");
  });

  it.each([
    "https://10.0.0.5/hook",
    "https://169.254.169.254/latest",
    // Names that resolve to such addresses now: delivery would refuse each connection.
    "https://hooks.internal.test/hook",
    "https://meta.internal.test/latest",
  ])("refuses %s when given to a task, a trigger or a schedule, and stores none", async (url) => {
    const task = await t.api("POST", "/v1/tasks", { plan, webhook_url: url });
    expect(task.status).toBe(422);
    expect(task.body.error.code).toBe("bad_webhook_url");
    expect(task.body.error.message).toMatch(/private|link-local/);
    const trigger = await t.api("POST", "/v1/triggers", { name: "t", plan, webhook_url: url });
    expect(trigger.status).toBe(422);
    expect(trigger.body.error.code).toBe("bad_webhook_url");
    const schedule = await t.api("POST", "/v1/schedules", {
      name: "s",
      cron: "0 9 * * *",
      timezone: "UTC",
      plan,
      webhook_url: url,
    });
    expect(schedule.status).toBe(422);
    expect(schedule.body.error.code).toBe("bad_webhook_url");
    const tasks = (await t.api("GET", "/v1/tasks")).body.tasks as Array<{ task_id: string }>;
    const triggers = (await t.api("GET", "/v1/triggers")).body.triggers as unknown[];
    const schedules = (await t.api("GET", "/v1/schedules")).body.schedules as unknown[];
    expect(triggers).toEqual([]);
    expect(schedules).toEqual([]);
    for (const { task_id } of tasks) {
      const one = await t.api("GET", `/v1/tasks/${task_id}`);
      expect(one.body.webhook?.url ?? null).not.toBe(url);
    }
  });
});
