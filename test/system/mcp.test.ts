// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * An MCP server nobody here wrote (the MCP project's "everything" server, in
 * Streamable HTTP, on loopback) through the whole local stack: a goal whose plan
 * calls two of its tools, its tools under /v1/tools, a schema violation refused at
 * validation, an erroring tool that triggers a plan update, the server stopped
 * mid-run and back, a host the namespace no longer allows refused at call time,
 * and a secret header that appears nowhere but on the wire (answers, commits,
 * events, logs).
 */
import type { Log } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EverythingServer, startEverything } from "../support/mcp-server";
import { call, finish } from "../support/plans";
import { readSse } from "../support/sse";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const SECRET = "Bearer sekret-mcp-token-5f1c";
const lines: string[] = [];
const capture = (level: string) => (message: string, extra?: Record<string, unknown>) => {
  lines.push(JSON.stringify({ level, message, ...extra }));
};
const log: Log = {
  debug: capture("debug"),
  info: capture("info"),
  warn: capture("warn"),
  error: capture("error"),
};

const t = useTestStack({ log });
let mcp: EverythingServer;
/** Every answer the API gave in this file, to search for the secret. */
const answers: string[] = [];
/** Every task started in this file, whose events stream is searched for the secret. */
const taskIds: string[] = [];

async function api(method: string, path: string, body?: unknown) {
  const answer = await t.api(method, path, body);
  answers.push(JSON.stringify(answer.body));
  if (method === "POST" && path === "/v1/tasks" && answer.body?.task_id) {
    taskIds.push(answer.body.task_id);
  }
  return answer;
}

async function commitsOf(taskId: string) {
  return (await api("GET", `/v1/tasks/${taskId}/branches/main/commits`)).body.commits as Array<{
    type: string;
    error: { code: string; message: string } | null;
    inputs: unknown;
    outputs: Record<string, unknown>;
  }>;
}

beforeAll(async () => {
  mcp = await startEverything();
  // Built-ins are allowed when listed (llm_generate: a step between two calls);
  // the servers' tools without being listed.
  const namespace = { allowed_hosts: ["127.0.0.1"], allowed_tools: ["llm_generate"] };
  expect((await api("PUT", "/v1/namespaces/mcp", namespace)).status).toBe(200);
});
afterAll(async () => {
  await mcp.stop();
});

describe("an MCP server as a tool source", () => {
  it("lists its tools when added, with the secret header shown as ***", async () => {
    const added = await api("POST", "/v1/namespaces/mcp/mcp-servers", {
      name: "every",
      url: mcp.url,
      headers: { Authorization: SECRET, "X-Plain": "plain" },
      secret_headers: ["Authorization"],
      tools: [
        "echo",
        "get-sum",
        "get-structured-content",
        "get-resource-reference",
        "get-tiny-image",
      ],
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.headers).toEqual({ Authorization: "***", "X-Plain": "plain" });
    expect(added.body.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      "echo",
      "get-resource-reference",
      "get-structured-content",
      "get-sum",
      "get-tiny-image",
    ]);
    // The server got the opened secret.
    expect(mcp.headers.some((h) => h.authorization === SECRET)).toBe(true);

    const tools = await api("GET", "/v1/tools?namespace=mcp");
    const sum = tools.body.tools.find((tool: { name: string }) => tool.name === "every.get-sum");
    expect(sum).toMatchObject({ source: "mcp", input_schema: { required: ["a", "b"] } });
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).not.toContain(
      "every.get-env",
    );
  });

  it("runs a goal whose plan calls two of its tools, sending the step's idempotency key", async () => {
    const before = mcp.headers.length;
    t.llm.on("plan", {
      reasoning: "sum, then echo",
      plan: [
        call(0, "every.get-sum", { a: 2, b: 3 }, ["sum"]),
        call(1, "every.echo", { message: "${sum}" }, ["echoed"]),
        finish(2, "${echoed}"),
      ],
    });
    const created = await api("POST", "/v1/tasks", { goal: "Add 2 and 3", namespace: "mcp" });
    expect(created.status).toBe(202);
    const task = await t.waitForTask(created.body.task_id);
    answers.push(JSON.stringify(task));

    expect(task).toMatchObject({
      status: "completed",
      final_answer: "Echo: The sum of 2 and 3 is 5.",
    });
    const plan = t.llm.requests.find((r) => r.schemaName === "plan");
    expect(plan?.messages[0]?.content).toContain("- every.get-sum:");
    const keys = new Set(mcp.headers.slice(before).map((h) => h["idempotency-key"]));
    keys.delete(undefined);
    expect(keys.size).toBe(2);
    await commitsOf(task.task_id);
  });

  it("refuses a plan whose params break the tool's input schema, with a hint", async () => {
    const created = await api("POST", "/v1/tasks", {
      namespace: "mcp",
      plan: [call(0, "every.get-sum", { a: "two" }, ["sum"]), finish(1, "${sum}")],
    });
    expect(created.status).toBe(422);
    const codes = created.body.error.details.problems.map((p: { code: string }) => p.code);
    expect(codes).toContain("invalid_tool_params");
    expect(created.body.error.details.problems[0].hint).toMatch(/a \(required\), b \(required\)/);
  });

  it("turns an isError answer into a step error that a plan update recovers from", async () => {
    t.llm.on("plan_update", {
      reasoning: "ask for the weather instead",
      plan: [
        call(0, "every.get-resource-reference", { resourceId: 0 }, ["ref"]),
        call(1, "every.get-structured-content", { location: "Chicago" }, ["weather"]),
        finish(2, "${weather.conditions}"),
      ],
      resume_at: 1,
    });
    const created = await api("POST", "/v1/tasks", {
      namespace: "mcp",
      plan: [
        call(0, "every.get-resource-reference", { resourceId: 0 }, ["ref"]),
        finish(1, "${ref}"),
      ],
    });
    const task = await t.waitForTask(created.body.task_id);
    answers.push(JSON.stringify(task));

    expect(task).toMatchObject({ status: "completed", final_answer: "Light rain / drizzle" });
    const commits = await commitsOf(task.task_id);
    const error = commits.find((c) => c.type === "error");
    expect(error?.error?.code).toBe("mcp_tool_error");
    expect(error?.error?.message).toMatch(/'every.get-resource-reference'.*Invalid resourceId/);
    expect(commits.map((c) => c.type)).toContain("plan_update");
  });

  it("stores an image answer in the blob store and keeps a reference", async () => {
    const created = await api("POST", "/v1/tasks", {
      namespace: "mcp",
      plan: [call(0, "every.get-tiny-image", {}, ["image"]), finish(1, "${image}")],
    });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status).toBe("completed");
    const image = (task.final_answer as Array<Record<string, unknown>>).find(
      (item) => typeof item === "object" && item.type === "image",
    );
    expect(image).toMatchObject({ mime_type: "image/png", blob: { $ref: "s3" } });

    // The reference downloads, for its tenant only.
    const sha = (image!.blob as { sha256: string }).sha256;
    const path = `/v1/tasks/${created.body.task_id}/blobs/${sha}`;
    const got = await fetch(`${t.url}${path}?type=image/png`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await got.arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(bytes.byteLength).toBe((image!.blob as { size: number }).size);
    const asPage = await fetch(`${t.url}${path}?type=text/html`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(asPage.headers.get("content-type")).toBe("application/octet-stream");
    expect(asPage.headers.get("content-disposition")).toMatch(/^attachment/);
    expect(asPage.headers.get("content-security-policy")).toContain("sandbox");
    const other = await t.api(
      "POST",
      "/v1/admin/tenants/blob-thief/keys",
      { name: "b" },
      { key: ADMIN_KEY },
    );
    expect(other.status).toBe(201);
    const stolen = await t.api("GET", path, undefined, { key: other.body.key });
    expect(stolen.status).toBe(404);
    const missing = await t.api("GET", path.replace(sha, "0".repeat(64)));
    expect(missing.status).toBe(404);
  });

  it("names the server when it is down mid-run, and the branch recovers when it is back", async () => {
    // The first call reaches the server; the step after it (an llm_generate that
    // reads its output, so the two are no parallel group) stops the server; the next call finds it down, and the plan update that
    // follows brings it back.
    t.llm.on("text", async () => {
      await mcp.stop();
      return "stopped";
    });
    t.llm.on("plan_update", async () => {
      await mcp.start();
      return {
        reasoning: "the server is back: call it again",
        plan: [
          call(0, "every.echo", { message: "hello" }, ["first"]),
          call(1, "llm_generate", { prompt: "Go on after ${first}" }, ["note"]),
          call(2, "every.echo", { message: "again" }, ["echoed"]),
          finish(3, "${first} / ${echoed}"),
        ],
        resume_at: 2,
      };
    });
    const created = await api("POST", "/v1/tasks", {
      namespace: "mcp",
      plan: [
        call(0, "every.echo", { message: "hello" }, ["first"]),
        call(1, "llm_generate", { prompt: "Go on after ${first}" }, ["note"]),
        call(2, "every.echo", { message: "${note}" }, ["echoed"]),
        finish(3, "${first} / ${echoed}"),
      ],
    });
    expect(created.body).toMatchObject({ status: "queued" });
    const task = await t.waitForTask(created.body.task_id);

    expect(task).toMatchObject({ status: "completed", final_answer: "Echo: hello / Echo: again" });
    const commits = (await commitsOf(task.task_id)).reverse(); // oldest first
    const firstCall = commits.findIndex((c) => c.outputs?.first === "Echo: hello");
    const error = commits.findIndex((c) => c.type === "error");
    expect(firstCall).toBeGreaterThanOrEqual(0);
    expect(error).toBeGreaterThan(firstCall);
    expect(commits[error]?.error?.code).toBe("mcp_unreachable");
    expect(commits[error]?.error?.message).toMatch(/MCP server 'every'/);
  });

  it("refuses a call at call time once the namespace no longer allows the server's host", async () => {
    const narrowed = { allowed_hosts: ["mcp.example.com"], allowed_tools: ["llm_generate"] };
    expect((await api("PUT", "/v1/namespaces/mcp", narrowed)).status).toBe(200);
    try {
      const callsBefore = mcp.calls.length;
      t.llm.on("plan_update", { fault: "status", status: 400, message: "no replan here" });
      const created = await api("POST", "/v1/tasks", {
        namespace: "mcp",
        plan: [call(0, "every.echo", { message: "hi" }, ["echoed"]), finish(1, "${echoed}")],
      });
      expect(created.status).toBe(202);
      const task = await t.waitForTask(created.body.task_id);
      expect(task.status).toBe("failed");
      // The operator opened loopback (the harness's STACKVM_OPEN_PRIVATE_RANGES),
      // so what refuses it is the namespace's own allow-list, checked at each call.
      const error = (await commitsOf(task.task_id)).find(
        (c) => c.error?.code === "host_not_allowed",
      );
      expect(error?.error?.message).toMatch(/host '127\.0\.0\.1' is not allowed/);
      expect(mcp.calls.length).toBe(callsBefore);
    } finally {
      const namespace = { allowed_hosts: ["127.0.0.1"], allowed_tools: ["llm_generate"] };
      expect((await api("PUT", "/v1/namespaces/mcp", namespace)).status).toBe(200);
    }
  });

  it("never shows the secret header in an answer, a commit, an event or a log line", async () => {
    const servers = await api("GET", "/v1/namespaces/mcp/mcp-servers");
    expect(servers.body.mcp_servers[0].headers.Authorization).toBe("***");
    const refreshed = await api("POST", "/v1/namespaces/mcp/mcp-servers/every/refresh");
    expect(refreshed.status).toBe(200);
    const events: string[] = [];
    expect(taskIds.length).toBeGreaterThanOrEqual(3);
    for (const id of taskIds) {
      const read = await readSse(`${t.url}/v1/tasks/${id}/events`, t.apiKey);
      expect(read.status).toBe(200);
      events.push(...read.events.map((e) => `${e.event} ${e.data}`));
    }
    expect(events.some((e) => e.includes("every.echo"))).toBe(true);
    const token = SECRET.split(" ")[1]!;
    for (const text of [...answers, ...events, ...lines]) expect(text).not.toContain(token);
    expect(lines.length).toBeGreaterThan(0);
  });

  it("refuses a server whose secret_headers names no header, and stores nothing", async () => {
    const added = await api("POST", "/v1/namespaces/mcp/mcp-servers", {
      name: "broken",
      url: mcp.url,
      secret_headers: ["Authorization"],
    });
    expect(added.status).toBe(400);
    expect(JSON.stringify(added.body)).toMatch(/not in headers/);
    const down = await api("POST", "/v1/namespaces/mcp/mcp-servers", {
      name: "nowhere",
      url: "http://127.0.0.1:1/mcp",
    });
    expect(down.status).toBe(422);
    const servers = await api("GET", "/v1/namespaces/mcp/mcp-servers");
    expect(servers.body.mcp_servers.map((s: { name: string }) => s.name)).toEqual(["every"]);
  });
});
