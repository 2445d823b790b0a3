// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * A tool call's queue message delivered twice, through the whole local stack:
 * - again after the first delivery was handled (SQS's at-least-once): the copy
 *   finds the head moved and calls nothing; the HTTP tool and the MCP tool each
 *   got one call, and the step has one commit;
 * - again while the first still waits for the tool (a worker presumed dead):
 *   both call, with the same idempotency key (so the receiver can answer the
 *   second from the first), and only one commit is written.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Log, StepMessage } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EverythingServer, startEverything } from "../support/mcp-server";
import { call, finish } from "../support/plans";
import { useTestStack } from "../support/stack";

/** The worker's "step outcome" lines, to wait for the copies to be handled. */
const outcomes: string[] = [];
const quiet = () => {};
const log: Log = {
  debug: (message, extra) => {
    if (message === "step outcome") outcomes.push(String(extra?.outcome));
  },
  info: quiet,
  warn: quiet,
  error: quiet,
};
const t = useTestStack({ log });

/** The receiver of the HTTP tools: `/add` answers at once, `/held` when a second request came. */
const requests: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
let onHeld: (() => void) | null = null;
let releaseHeld: (() => void) | null = null;
let receiver: Server;
let receiverUrl = "";
let mcp: EverythingServer;

/** Every step message sent, to deliver one again. */
const sent: StepMessage[] = [];
let send: (typeof t.stack.system.step.queue)["send"];

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { a: number; b: number };
    requests.push({ path: req.url ?? "", headers: req.headers });
    if (req.url === "/held") {
      const held = requests.filter((r) => r.path === "/held").length;
      if (held === 1) {
        await new Promise<void>((resolve) => {
          releaseHeld = resolve;
          onHeld?.();
        });
      } else releaseHeld?.();
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ sum: input.a + input.b }));
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  mcp = await startEverything();

  expect(
    (await t.api("PUT", "/v1/namespaces/twice", { allowed_hosts: ["127.0.0.1"] })).status,
  ).toBe(200);
  for (const name of ["add", "held"]) {
    const added = await t.api("POST", "/v1/namespaces/twice/http-tools", {
      name,
      description: "Adds a and b",
      url: `${receiverUrl}/${name}`,
      input_schema: { type: "object", required: ["a", "b"] },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
  }
  const server = await t.api("POST", "/v1/namespaces/twice/mcp-servers", {
    name: "every",
    url: mcp.url,
    tools: ["get-sum"],
  });
  expect(server.status, JSON.stringify(server.body)).toBe(201);

  const queue = t.stack.system.step.queue;
  send = queue.send.bind(queue);
  queue.send = async (body, options) => {
    if ((body as StepMessage).kind === "step") sent.push(body as StepMessage);
    await send(body, options);
  };
});
afterAll(async () => {
  t.stack.system.step.queue.send = send;
  await mcp.stop();
  await new Promise((resolve) => receiver.close(resolve));
});

/** Delivers a message again, in its own group so that it may run beside the first. */
async function deliverAgain(message: StepMessage, tag: string): Promise<void> {
  await send(message, {
    groupId: `${message.tenant_id}:${message.task_id}:${tag}`,
    deduplicationId: `${message.task_id}-${message.head}-${tag}`,
  });
}

/** Waits until the worker has handled `count` more duplicates than `before`. */
async function duplicatesHandled(before: number, count: number): Promise<void> {
  const duplicates = () => outcomes.filter((o) => o === "duplicate").length;
  while (duplicates() < before + count) await new Promise((r) => setTimeout(r, 20));
}

async function stepCommits(taskId: string) {
  const listed = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits`);
  return (listed.body.commits as Array<{ seq_no: number | null; type: string }>).filter(
    (c) => c.seq_no === 0 && c.type === "step",
  );
}

describe("a tool call's message delivered twice", () => {
  it.each([
    ["an HTTP tool", call(0, "add", { a: 2, b: 3 }, ["out"]), "${out.sum}", 5],
    [
      "an MCP tool",
      call(0, "every.get-sum", { a: 2, b: 3 }, ["out"]),
      "${out}",
      "The sum of 2 and 3 is 5.",
    ],
  ])(
    "calls %s once when the copy comes after the first was handled",
    async (_what, step, value, answer) => {
      requests.length = 0;
      mcp.calls.length = 0;
      const created = await t.api("POST", "/v1/tasks", {
        namespace: "twice",
        plan: [step, finish(1, value)],
      });
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      const taskId = created.body.task_id as string;
      expect(await t.waitForTask(taskId)).toMatchObject({
        status: "completed",
        final_answer: answer,
      });

      const before = outcomes.filter((o) => o === "duplicate").length;
      const messages = sent.filter((m) => m.task_id === taskId);
      for (const message of messages) await deliverAgain(message, "again");
      await duplicatesHandled(before, messages.length);

      const calls = [...requests.filter((r) => r.path === "/add"), ...mcp.calls];
      expect(calls).toHaveLength(1);
      expect(await stepCommits(taskId)).toHaveLength(1);
    },
  );

  it("sends the same idempotency key twice and commits once when the copy runs beside the first", async () => {
    requests.length = 0;
    let taskId = "";
    // While the receiver holds the first call, the message that made it is delivered again.
    onHeld = () => {
      const running = sent.filter((m) => m.task_id === taskId).at(-1);
      if (running) void deliverAgain(running, "beside");
    };
    const before = outcomes.filter((o) => o === "duplicate").length;
    const created = await t.api("POST", "/v1/tasks", {
      namespace: "twice",
      plan: [call(0, "held", { a: 4, b: 5 }, ["out"]), finish(1, "${out.sum}")],
    });
    taskId = created.body.task_id;
    expect(await t.waitForTask(taskId)).toMatchObject({ status: "completed", final_answer: 9 });
    await duplicatesHandled(before, 1);
    onHeld = null;

    const held = requests.filter((r) => r.path === "/held");
    expect(held).toHaveLength(2);
    expect(held[1]!.headers["idempotency-key"]).toBe(held[0]!.headers["idempotency-key"]);
    expect(held[1]!.headers["webhook-id"]).toBe(held[0]!.headers["webhook-id"]);
    expect(await stepCommits(taskId)).toHaveLength(1);
  });
});
