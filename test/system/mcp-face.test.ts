// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans' ${name} references
/**
 * The MCP server face (`POST /mcp`) against the local stack, read by clients
 * nobody here wrote: the MCP SDK's own `Client` over its Streamable HTTP
 * transport (tools/list, a call with progress, a saved template with its
 * inputs, a failed task, a cancelled call) and MCP Inspector's CLI; then
 * attacked: no key, a wrong key, another tenant's tools, wrong and oversized
 * arguments, GET and DELETE, bodies that are not JSON-RPC.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tenantKey } from "../support/attacker";
import { call } from "../support/plans";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let mallory: string;
const clients: Client[] = [];

const ANSWER = "Kyoto keeps some 1,600 temples.";
const PLAN = [call(0, "llm_generate", { prompt: "Answer the goal." }, ["final_answer"])];
/** Two steps: a cancel seen while the first runs stops the task before the second. */
const TWO_STEPS = [
  call(0, "llm_generate", { prompt: "Draft it." }, ["draft"]),
  { seq_no: 1, type: "assign", parameters: { final_answer: "${draft}" } },
];
const CITY_PLAN = [
  call(0, "llm_generate", { prompt: "Describe ${city} in ${words} words." }, ["final_answer"]),
];

async function connect(
  key: string | null = t.apiKey,
  fetchFn: typeof fetch = fetch,
): Promise<Client> {
  const client = new Client({ name: "stackvm-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
    fetch: fetchFn,
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A raw POST to /mcp as a client would send it. */
function post(body: string, headers: Record<string, string> = {}, key: string | null = t.apiKey) {
  return fetch(`${t.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body,
  });
}

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
});

async function taskCount(key = t.apiKey): Promise<number> {
  const { body } = await t.api("GET", "/v1/tasks?limit=100", undefined, { key });
  return body.tasks.length;
}

/** The text of a tool result's first content. */
const textOf = (result: unknown) =>
  ((result as { content: Array<{ text: string }> }).content[0]?.text ?? "") as string;

beforeAll(async () => {
  t = await startTestStack({ env: { LLM_TIMEOUT_MS: "20000" } });
  mallory = await tenantKey(t, "mallory", "m");
  expect(
    (
      await t.api("PUT", "/v1/namespaces/travel", {
        description: "Trips and cities",
        allowed_tools: ["llm_generate"],
      })
    ).status,
  ).toBe(200);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await t?.stop();
});
beforeEach(() => {
  t.llm.reset();
  t.llm.on("plan", { reasoning: "one step writes the answer", plan: PLAN });
  t.llm.on("text", ANSWER);
});

/** Saves CITY_PLAN as a template of the namespace travel: its tool's name. */
async function saveCityTemplate(): Promise<string> {
  const started = await t.api("POST", "/v1/tasks", {
    goal: "Describe a city",
    namespace: "travel",
    plan: CITY_PLAN,
    inputs: { city: "Kyoto", words: 10 },
  });
  expect(started.status).toBe(202);
  expect((await t.waitForTask(started.body.task_id)).status).toBe("completed");
  const { body: branch } = await t.api("GET", `/v1/tasks/${started.body.task_id}/branches/main`);
  const saved = await t.api(
    "POST",
    `/v1/tasks/${started.body.task_id}/commits/${branch.head}/save-plan`,
  );
  expect(saved.status).toBe(201);
  return saved.body.template_id;
}

describe("POST /mcp with the MCP SDK's client", () => {
  it("answers initialize with the server's tools capability and a session id", async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: "stackvm" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toMatch(/run_\{namespace\}/);
    const response = await post(initialize);
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toMatch(/^mcp_[0-9a-f]{32}$/);
    await response.body?.cancel();
  });

  it("lists the tenant's namespaces and saved templates as tools, with stable valid names", async () => {
    const templateId = await saveCityTemplate();
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["run_default", "run_travel", templateId]));
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const travel = tools.find((tool) => tool.name === "run_travel")!;
    expect(travel.description).toMatch(/Trips and cities/);
    expect(travel.inputSchema).toMatchObject({
      type: "object",
      required: ["goal"],
      properties: { goal: { type: "string" } },
    });
    const template = tools.find((tool) => tool.name === templateId)!;
    expect(template.description).toMatch(/Describe a city/);
    expect(template.inputSchema.required).toEqual(["city", "words"]);
    // The same names on the next listing: a client's configuration stays valid.
    expect((await (await connect()).listTools()).tools.map((tool) => tool.name)).toEqual(names);
  });

  it("runs a call as a task, sends its commits as progress and answers its final answer", async () => {
    const client = await connect();
    const before = await taskCount();
    const progress: Progress[] = [];
    const result = await client.callTool(
      { name: "run_default", arguments: { goal: "Which city has more temples?" } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(ANSWER);
    const structured = result.structuredContent as { task_id: string; status: string };
    expect(structured).toMatchObject({ status: "completed", final_answer: ANSWER });
    expect(progress[0]?.message).toBe(`started task ${structured.task_id}`);
    expect(progress.map((p) => p.message)).toEqual(
      expect.arrayContaining(["main: wrote the plan", "main: called llm_generate (step 0)"]),
    );
    // Progress only rises, as MCP requires.
    expect(progress.map((p) => p.progress)).toEqual(
      [...progress.map((p) => p.progress)].sort((a, b) => a - b),
    );
    expect(new Set(progress.map((p) => p.progress)).size).toBe(progress.length);
    expect(await taskCount()).toBe(before + 1);
    const task = await t.api("GET", `/v1/tasks/${structured.task_id}`);
    expect(task.body).toMatchObject({
      goal: "Which city has more temples?",
      namespace: "default",
      status: "completed",
      metadata: { source: "mcp", mcp_tool: "run_default" },
    });
  });

  it("runs a template tool's plan with its arguments as the inputs, with no planning", async () => {
    const templateId = await saveCityTemplate();
    t.llm.reset();
    t.llm.on(
      "text",
      (request) => `seen: ${JSON.stringify(request.body.messages).includes("Nara")}`,
    );
    const client = await connect();
    const result = await client.callTool({
      name: templateId,
      arguments: { city: "Nara", words: 12 },
    });
    expect(textOf(result)).toBe("seen: true");
    expect(t.llm.requests.filter((r) => r.schemaName === "plan")).toEqual([]);
    const taskId = (result.structuredContent as { task_id: string }).task_id;
    const task = await t.api("GET", `/v1/tasks/${taskId}`);
    expect(task.body).toMatchObject({ namespace: "travel", status: "completed" });
  });

  it("answers a failed task as a tool result with isError and the task's error", async () => {
    t.llm.on("plan", { fault: "status", status: 400, message: "the model refuses" });
    const client = await connect();
    const result = await client.callTool({
      name: "run_default",
      arguments: { goal: "Plan something the model will not." },
    });
    expect(result.isError).toBe(true);
    const structured = result.structuredContent as {
      task_id: string;
      status: string;
      error: string;
    };
    expect(structured.status).toBe("failed");
    expect(structured.error).toMatch(/\S/);
    expect(textOf(result)).toContain(`Task ${structured.task_id} failed: `);
  });

  it("cancels the call's task when the client cancels the call", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached!: () => void;
    const atModel = new Promise<void>((resolve) => {
      reached = resolve;
    });
    t.llm.on("plan", { reasoning: "a draft, then the answer", plan: TWO_STEPS });
    t.llm.on("text", async () => {
      reached();
      await held;
      return ANSWER;
    });
    // The client's requests, watched: the cancel is a notification of its own.
    let cancelAnswered!: (status: number) => void;
    const cancelled = new Promise<number>((resolve) => {
      cancelAnswered = resolve;
    });
    const watched: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (String(init?.body ?? "").includes('"notifications/cancelled"')) {
        cancelAnswered(response.status);
      }
      return response;
    };
    const client = await connect(t.apiKey, watched);
    const abort = new AbortController();
    let taskId = "";
    const call = client
      .callTool({ name: "run_default", arguments: { goal: "A slow one." } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => {
          taskId ||= /started task (\S+)/.exec(p.message ?? "")?.[1] ?? "";
        },
      })
      .then(
        () => "answered",
        (error: Error) => error.name,
      );
    await atModel;
    expect(taskId).toMatch(/^tsk_/);
    abort.abort("the user stopped it");
    expect(await call).not.toBe("answered");
    // Answered once the cancel is recorded; the held step ends, and the task stops there.
    expect(await cancelled).toBe(202);
    release();
    expect((await t.waitForTask(taskId)).status).toBe("cancelled");
  });
});

describe("POST /mcp with MCP Inspector's CLI", () => {
  const run = promisify(execFile);
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), "mcp-inspector-"));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  const inspector = (args: string[], key = t.apiKey) =>
    run(
      "node",
      [
        "node_modules/.bin/mcp-inspector",
        "--cli",
        `${t.url}/mcp`,
        "--transport",
        "http",
        "--header",
        `Authorization: Bearer ${key}`,
        ...args,
      ],
      {
        encoding: "utf8",
        timeout: 60_000,
        // Its catalog and settings go to a folder of the test's own.
        env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json") },
      },
    );

  it("lists the tools, with no portability problem in their schemas", async () => {
    const { stdout } = await inspector(["--method", "tools/list", "--strict"]);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string }> };
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["run_default", "run_travel"]),
    );
  });

  it("calls a namespace tool and prints the task's final answer", async () => {
    const { stdout } = await inspector([
      "--method",
      "tools/call",
      "--tool-name",
      "run_default",
      "--tool-arg",
      "goal=Which city has more temples?",
    ]);
    const result = JSON.parse(stdout) as { content: Array<{ text: string }>; isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(result.content[0]?.text).toBe(ANSWER);
  });
});

describe("POST /mcp attacked", () => {
  it("refuses a request without a key, or with a wrong one, before any MCP handling", async () => {
    for (const key of [null, "svm_acme_notakey", t.apiKey.slice(0, -2)]) {
      const response = await post(initialize, {}, key);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(response.headers.get("mcp-session-id")).toBeNull();
      expect(await response.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32000, message: expect.any(String), data: { code: "unauthorized" } },
      });
    }
    await expect(connect(null)).rejects.toThrow(/401|nauthorized/);
  });

  it("shows another tenant none of this tenant's tools, and runs none of them for it", async () => {
    const templateId = await saveCityTemplate();
    const client = await connect(mallory);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(["run_default"]);
    const before = { acme: await taskCount(), mallory: await taskCount(mallory) };
    for (const name of [templateId, "run_travel"]) {
      const error = await client
        .callTool({ name, arguments: { city: "Nara", words: 1, goal: "x" } })
        .then(
          () => null,
          (e: { code?: number; message: string }) => e,
        );
      expect(error?.code).toBe(-32602);
      expect(error?.message).toMatch(/Unknown tool/);
    }
    // A tool name that is no tool at all answers the same.
    await expect(client.callTool({ name: "../v1/tasks", arguments: {} })).rejects.toThrow(
      /Unknown tool/,
    );
    expect({ acme: await taskCount(), mallory: await taskCount(mallory) }).toEqual(before);
  });

  it("answers wrong and oversized arguments as a tool error that says what is wrong, starting nothing", async () => {
    const templateId = await saveCityTemplate();
    const client = await connect();
    const before = await taskCount();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["run_default", { goal: 7 }, /goal/],
      ["run_default", {}, /goal/],
      ["run_default", { goal: "x", namespace: "travel" }, /namespace|Unrecognized/],
      ["run_default", { goal: "x".repeat(10_001) }, /10000/],
      [templateId, { city: "Nara" }, /missing words/],
      [templateId, { city: "Nara", words: 3, extra: 1 }, /unknown argument\(s\) extra/],
    ];
    for (const [name, args, why] of cases) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(textOf(result)).toMatch(/^invalid_arguments: /);
      expect(textOf(result)).toMatch(why);
    }
    expect(await taskCount()).toBe(before);
  });

  it("refuses a body over the API's limit with 413 in JSON-RPC's shape", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "run_default", arguments: { goal: "x".repeat(2 * 1024 * 1024) } },
    });
    const before = await taskCount();
    const response = await post(big);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32600, data: { code: "too_large" } },
    });
    expect(await taskCount()).toBe(before);
  });

  it("answers GET and DELETE with 405 and Allow: POST, as a stateless server", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${t.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${t.apiKey}`, accept: "text/event-stream" },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(await response.json()).toMatchObject({
        jsonrpc: "2.0",
        error: { code: -32600, data: { code: "method_not_allowed" } },
      });
    }
  });

  it("answers bodies that are no JSON-RPC message with a JSON-RPC error", async () => {
    const answers: Array<[string, Record<string, string>, number, number]> = [
      ["{not json", {}, 400, -32700],
      ['{"hello": "world"}', {}, 400, -32700],
      ['{"jsonrpc": "2.0", "id": 1}', {}, 400, -32700],
      [`[${initialize}, ${initialize}]`, {}, 400, -32600],
      [initialize, { accept: "application/json" }, 406, -32000],
      [initialize, { "mcp-session-id": "a b" }, 400, -32600],
    ];
    for (const [body, headers, status, code] of answers) {
      const response = await post(body, headers);
      expect(response.status, body.slice(0, 40)).toBe(status);
      expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code } });
    }
    // A method the server does not have is the JSON-RPC error for it, not a crash.
    const unknown = await post(
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "resources/list", params: {} }),
    );
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toContain('"code":-32601');
  });
});
