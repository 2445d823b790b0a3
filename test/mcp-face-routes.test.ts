/**
 * The MCP face's edges, through the API app in process over the in-memory
 * adapters (no worker runs its queue, so a task stays running at its first step): the MCP SDK's
 * client talks to `app.request` through its transport's `fetch`. A call whose
 * task does not end within the wait (STACKVM_MCP_WAIT_SECONDS) answers with the
 * task's id and how to read it; a call sent again in its session starts no
 * second task; and another tenant can neither cancel a call's task nor reach
 * it, and leaves no record behind.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { createApp } from "@stackvm/api";
import type { Item, ItemStore } from "@stackvm/core";
import { MemoryItemStore } from "@stackvm/core/testing";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { inProcessApi } from "./support/in-process-api";

/** Every write but the rate limiter's count of the caller's own requests, as `pk sk`. */
const writes: string[] = [];
const items = new Proxy(new MemoryItemStore() as ItemStore, {
  get(target, prop, receiver) {
    const value = Reflect.get(target, prop, receiver);
    if (typeof value !== "function") return value;
    if (prop !== "put" && prop !== "update") return value.bind(target);
    return (item: Item, ...rest: unknown[]) => {
      if (item.sk !== "RATE") writes.push(`${item.pk} ${item.sk}`);
      return value.apply(target, [item, ...rest]);
    };
  },
});
let app: ReturnType<typeof createApp>;
let api: ReturnType<typeof inProcessApi>;
let acme: string;
let mallory: string;

beforeAll(async () => {
  api = inProcessApi({ env: { STACKVM_MCP_WAIT_SECONDS: "1" }, items });
  app = api.app;
  acme = (await api.system.keys.create("acme", "mcp")).key;
  mallory = (await api.system.keys.create("mallory", "mcp")).key;
});

/** A `fetch` that the app answers, in this process. */
const inProcess: typeof fetch = async (input, init) =>
  app.request(input instanceof Request ? input : String(input), init);

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "in-process", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://stackvm.test/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: inProcess,
    }),
  );
  return client;
}

/** A raw JSON-RPC POST; the answer's JSON-RPC messages (an SSE stream's too). */
async function rpc(key: string, message: unknown, session?: string) {
  const response = await app.request("/mcp", {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session ? { "mcp-session-id": session } : {}),
    },
    body: JSON.stringify(message),
  });
  const text = await response.text();
  const messages = text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)));
  return { response, messages };
}

async function tasksOf(key: string) {
  const answer = await app.request("/v1/tasks?limit=100", {
    headers: { authorization: `Bearer ${key}` },
  });
  return ((await answer.json()) as { tasks: Array<{ task_id: string; status: string }> }).tasks;
}

const callRun = (id: number, goal: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "run_default", arguments: { goal } },
});

async function session(key: string): Promise<string> {
  const { response } = await rpc(key, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  });
  return response.headers.get("mcp-session-id")!;
}

describe("an MCP call's wait for its task", () => {
  it("answers a task still running at the end of the wait with its id and how to read it, and the task goes on", async () => {
    const client = await connect(acme);
    const result = await client.callTool({
      name: "run_default",
      arguments: { goal: "A task no worker runs here." },
    });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { task_id: string; status: string };
    expect(structured.task_id).toMatch(/^tsk_/);
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain(`Task ${structured.task_id} is still ${structured.status} after 1 s`);
    expect(text).toContain(`GET /v1/tasks/${structured.task_id}`);
    const task = (await tasksOf(acme)).find((t) => t.task_id === structured.task_id);
    expect(task?.status).toBe("running");
  });

  it("starts one task for a call sent twice in one session", async () => {
    const id = await session(acme);
    const before = (await tasksOf(acme)).length;
    const first = await rpc(acme, callRun(7, "Once, please."), id);
    const again = await rpc(acme, callRun(7, "Once, please."), id);
    const taskOf = (answer: typeof first) =>
      answer.messages.find((m) => m.id === 7)?.result?.structuredContent?.task_id;
    expect(taskOf(first)).toMatch(/^tsk_/);
    expect(taskOf(again)).toBe(taskOf(first));
    expect((await tasksOf(acme)).length).toBe(before + 1);
    // Another session's request 7 is another call.
    const other = await rpc(acme, callRun(7, "Once, please."), await session(acme));
    expect(taskOf(other)).not.toBe(taskOf(first));
  });
});

describe("the MCP face's rate limit", () => {
  it("counts MCP requests in the tenant's requests per second: a flood gets 429 in JSON-RPC's shape", async () => {
    const limited = inProcessApi({ env: { STACKVM_RATE_LIMIT_RPS: "5" } });
    const key = (await limited.system.keys.create("flood", "mcp")).key;
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        limited.app.request("/mcp", {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify(
            i % 2
              ? { jsonrpc: "2.0", id: i, method: "tools/list" }
              : { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: i } },
          ),
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 429 && s !== 200 && s !== 202)).toEqual([]);
    const refused = answers.find((a) => a.status === 429)!;
    const body = (await refused.json()) as { jsonrpc: string; error: { message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.message).toMatch(/rate|requests/i);
  });
});

describe("tools/list", () => {
  it("answers an empty cursor (a client's first page) with the namespaces, as no cursor", async () => {
    const list = (params: Record<string, unknown>) =>
      rpc(acme, { jsonrpc: "2.0", id: 31, method: "tools/list", params });
    const names = async (params: Record<string, unknown>) =>
      ((await list(params)).messages.find((m) => m.id === 31)?.result?.tools ?? []).map(
        (tool: { name: string }) => tool.name,
      );
    const none = await names({});
    expect(none).toContain("run_default");
    expect(await names({ cursor: "" })).toEqual(none);
  });
});

describe("a call's progress token", () => {
  it("refuses a progress token too long to send back with every step, starting nothing", async () => {
    const before = (await tasksOf(acme)).length;
    const long = {
      ...callRun(21, "Progress, please."),
      params: {
        ...callRun(21, "").params,
        arguments: { goal: "Progress, please." },
        _meta: { progressToken: "p".repeat(100_000) },
      },
    };
    const refused = await rpc(acme, long, await session(acme));
    const error = refused.messages.find((m) => m.id === 21)?.error;
    expect(error?.code).toBe(-32602);
    expect(error?.message).toMatch(/a progress token is at most 256/);
    expect((await tasksOf(acme)).length).toBe(before);
    // A short one, or a number, is taken.
    const ok = await rpc(
      acme,
      { ...long, id: 22, params: { ...long.params, _meta: { progressToken: 7 } } },
      await session(acme),
    );
    expect(ok.messages.find((m) => m.id === 22)?.result?.structuredContent?.task_id).toMatch(
      /^tsk_/,
    );
    expect(
      ok.messages.some(
        (m) => m.method === "notifications/progress" && m.params.progressToken === 7,
      ),
    ).toBe(true);
  });
});

describe("a request id used again in a session", () => {
  it("refuses another call under a request id the session used, instead of answering the first call's task", async () => {
    // A client that resumes a session with its ids counted from 0 again.
    const id = await session(acme);
    const first = await rpc(acme, callRun(3, "The first question."), id);
    const firstTask = first.messages.find((m) => m.id === 3)?.result?.structuredContent?.task_id;
    expect(firstTask).toMatch(/^tsk_/);
    const before = (await tasksOf(acme)).length;
    const second = await rpc(acme, callRun(3, "Another question."), id);
    const result = second.messages.find((m) => m.id === 3)?.result;
    expect(result?.isError).toBe(true);
    expect(result?.structuredContent?.error?.code).toBe("request_id_reused");
    expect(result?.content?.[0]?.text).toMatch(/send this call with a new id/);
    // Not the first call's answer: no task of its own, the first one named as the reason.
    expect(result?.structuredContent?.task_id).toBeUndefined();
    expect(result?.content?.[0]?.text).toContain(`task ${firstTask}`);
    expect((await tasksOf(acme)).length).toBe(before);
    // Under a new id it is a call of its own.
    const fresh = await rpc(acme, callRun(4, "Another question."), id);
    const freshTask = fresh.messages.find((m) => m.id === 4)?.result?.structuredContent?.task_id;
    expect(freshTask).toMatch(/^tsk_/);
    expect(freshTask).not.toBe(firstTask);
  });
});

describe("an MCP call attacked by another tenant", () => {
  it("cannot cancel another tenant's call, even with its session and request id", async () => {
    const id = await session(acme);
    const started = await rpc(acme, callRun(9, "Mine."), id);
    const taskId = started.messages.find((m) => m.id === 9)?.result?.structuredContent?.task_id;
    const cancel = {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 9, reason: "mallory" },
    };
    const puts = writes.length;
    const refused = await rpc(mallory, cancel, id);
    expect(refused.response.status).toBe(202);
    expect(writes.slice(puts)).toEqual([]);
    const task = (await tasksOf(acme)).find((t) => t.task_id === taskId);
    expect(task?.status).toBe("running");
    // The tenant's own cancel of the same call marks the task's branch to stop
    // at its next step (none runs here to take it).
    const mine = writes.length;
    expect((await rpc(acme, cancel, id)).response.status).toBe(202);
    expect(writes.slice(mine)).toEqual([expect.stringContaining(taskId)]);
  });

  it("leaves no record behind for a refused call or listing", async () => {
    const before = writes.length;
    const client = await connect(mallory);
    await client.listTools();
    await expect(client.callTool({ name: "tpl_000000000000000000000000" })).rejects.toThrow(
      /Unknown tool/,
    );
    const wrong = await client.callTool({ name: "run_default", arguments: { goal: ["x"] } });
    expect(wrong.isError).toBe(true);
    expect(writes.slice(before)).toEqual([]);
  });
});

describe("a stream token sent to the MCP face", () => {
  it("refuses it as out of its scope before checking it, so forged ones read no tenant's secret", async () => {
    // POST /mcp is not under /v1: the source-address count of tokens does not
    // apply there, so a token must be refused before its tenant's secret is read.
    const verify = vi.spyOn(api.system.api.streamTokens, "verify");
    const forged = `stk_${Buffer.from(JSON.stringify({ v: 1, t: "acme", k: "tsk_x", e: 9e9 })).toString("base64url")}.bad`;
    for (const method of ["POST", "GET"]) {
      const answer = await app.request(`/mcp?token=${forged}`, {
        method,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        ...(method === "POST"
          ? { body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) }
          : {}),
      });
      expect(answer.status, method).toBe(403);
      expect(JSON.stringify(await answer.json())).toContain(
        "a stream token only reads its own task",
      );
    }
    expect(verify).not.toHaveBeenCalled();
    verify.mockRestore();
  });
});
