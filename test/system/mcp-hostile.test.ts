// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * Issue 30, findings 3 and 4: MCP servers built to break or starve the others,
 * made with the official SDK on loopback, through the whole local stack (four
 * worker slots shared by every tenant).
 *
 * - A server that lists two tools of one name, at registration or on a later
 *   refresh, is refused; the namespace's submit, validate and tool list go on.
 * - A server whose tool has an `inputSchema` out of bounds (a `$ref` to itself,
 *   an anyOf chain that doubles at each level, a backreference), at
 *   registration or on a later refresh, is refused with 422 `invalid_schema`
 *   naming the server and tool; nothing is stored, a refresh keeps the old list.
 * - A server that takes 14 s per call, called by eight tasks of one tenant at
 *   once, holds at most two slots: another tenant's trivial task is done at once.
 * - A record whose URL is rewritten (as by someone who can write the table, not
 *   use the key) does not open its secret headers: nothing reaches the new host.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, finish } from "../support/plans";
import {
  type ScriptedMcpServer,
  type ScriptedTool,
  startScriptedMcp,
} from "../support/scripted-mcp-server";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

/** An `inputSchema` whose `$defs` double at each of `levels` levels (1.7 s a call at 19, before). */
function anyOfChain(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { [`l${levels}`]: { type: "string" } };
  for (let i = 0; i < levels; i++) {
    defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  }
  return { type: "object", properties: { x: { $ref: "#/$defs/l0" } }, $defs: defs };
}

let t: TestStack;
let other: string;
const servers: ScriptedMcpServer[] = [];

async function scripted(names: Array<string | ScriptedTool>): Promise<ScriptedMcpServer> {
  const server = await startScriptedMcp(
    names.map((tool) => (typeof tool === "string" ? { name: tool } : tool)),
  );
  servers.push(server);
  return server;
}

const addServer = (ns: string, body: Record<string, unknown>) =>
  t.api("POST", `/v1/namespaces/${ns}/mcp-servers`, body);

beforeAll(async () => {
  t = await startTestStack();
  other = (
    await t.api("POST", "/v1/admin/tenants/bystander/keys", { name: "b" }, { key: ADMIN_KEY })
  ).body.key;
  for (const ns of ["dups", "slow", "sealed"]) {
    expect(
      (await t.api("PUT", `/v1/namespaces/${ns}`, { allowed_hosts: ["127.0.0.1"] })).status,
    ).toBe(200);
  }
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all(servers.map((s) => s.stop()));
}, 60_000);

describe("hostile MCP servers", () => {
  it("refuses a listing with a tool named twice, at registration and on refresh, and the namespace keeps working", async () => {
    const good = await scripted(["a"]);
    const twice = await scripted(["x", "x"]);
    expect((await addServer("dups", { name: "good", url: good.url })).status).toBe(201);

    const refused = await addServer("dups", { name: "twice", url: twice.url });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: "mcp_duplicate_tool" });
    expect(refused.body.error.message).toMatch(/more than one tool named 'x'/);

    // The good server turns hostile on its next listing.
    good.tools = [{ name: "a" }, { name: "a" }, { name: "b" }];
    const refresh = await t.api("POST", "/v1/namespaces/dups/mcp-servers/good/refresh");
    expect(refresh.status).toBe(422);
    expect(refresh.body.error.code).toBe("mcp_duplicate_tool");

    const tools = await t.api("GET", "/v1/tools?namespace=dups");
    expect(tools.status).toBe(200);
    const names = tools.body.tools.map((tool: { name: string }) => tool.name);
    expect(names).toContain("good.a");
    expect(names).not.toContain("twice.x");
    const plan = [call(0, "good.a", {}, ["out"]), finish(1, "${out}")];
    expect((await t.api("POST", "/v1/plans/validate", { namespace: "dups", plan })).status).toBe(
      200,
    );
    const started = await t.api("POST", "/v1/tasks", { namespace: "dups", plan });
    expect(started.status).toBe(202);
    expect(await t.waitForTask(started.body.task_id)).toMatchObject({
      status: "completed",
      final_answer: "called a",
    });
  }, 60_000);

  it("refuses a listing whose inputSchema is out of bounds, at registration and on refresh, storing nothing", async () => {
    // Another tenant's own namespace: what it is refused must not land anywhere.
    const asOther = (method: string, path: string, body?: unknown) =>
      t.api(method, path, body, { key: other });
    expect(
      (await asOther("PUT", "/v1/namespaces/schemas", { allowed_hosts: ["127.0.0.1"] })).status,
    ).toBe(200);
    const hostile: ScriptedTool[] = [
      { name: "self", inputSchema: { type: "object", $ref: "#" } },
      { name: "chain", inputSchema: anyOfChain(19) },
      {
        name: "backref",
        inputSchema: {
          type: "object",
          properties: { s: { type: "string", pattern: "^(a+)\\1$" } },
        },
      },
    ];
    const expected: Record<string, RegExp> = {
      self: /leads back to itself/,
      chain: /more than 2000 nodes/,
      backref: /cannot be matched in linear time/,
    };
    for (const tool of hostile) {
      const server = await scripted(["fine", tool]);
      const refused = await asOther("POST", "/v1/namespaces/schemas/mcp-servers", {
        name: tool.name,
        url: server.url,
      });
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe("invalid_schema");
      expect(refused.body.error.message).toContain(
        `the inputSchema of the tool '${tool.name}' of the MCP server '${tool.name}'`,
      );
      expect(refused.body.error.message).toMatch(expected[tool.name]!);
    }
    expect((await asOther("GET", "/v1/namespaces/schemas/mcp-servers")).body.mcp_servers).toEqual(
      [],
    );
    for (const tool of hostile) {
      expect(
        await t.stack.system.namespaces.getToolRecord("bystander", "schemas", `mcp:${tool.name}`),
      ).toBeFalsy();
    }
    const listed = (await asOther("GET", "/v1/tools?namespace=schemas")).body.tools as Array<{
      name: string;
    }>;
    expect(
      listed.some((tool) => tool.name.startsWith("self.") || tool.name.startsWith("chain.")),
    ).toBe(false);

    // Left out by the allow list, the broken tool is never compiled: the server is taken.
    const mixed = await scripted(["fine", hostile[0]!]);
    const allowed = await asOther("POST", "/v1/namespaces/schemas/mcp-servers", {
      name: "mixed",
      url: mixed.url,
      tools: ["fine"],
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["fine"]);

    // A good server turns hostile on its next listing: refused, the stored list stands.
    const good = await scripted(["fine"]);
    const added = await asOther("POST", "/v1/namespaces/schemas/mcp-servers", {
      name: "good",
      url: good.url,
    });
    expect(added.status).toBe(201);
    good.tools = [{ name: "fine" }, hostile[1]!];
    const refresh = await asOther("POST", "/v1/namespaces/schemas/mcp-servers/good/refresh");
    expect(refresh.status).toBe(422);
    expect(refresh.body.error.code).toBe("invalid_schema");
    expect(refresh.body.error.message).toMatch(/tool 'chain' of the MCP server 'good'/);
    const servers = (await asOther("GET", "/v1/namespaces/schemas/mcp-servers")).body.mcp_servers;
    expect(servers.find((s: { name: string }) => s.name === "good")).toEqual(added.body);
    const plan = [call(0, "good.fine", {}, ["out"]), finish(1, "${out}")];
    const started = await asOther("POST", "/v1/tasks", { namespace: "schemas", plan });
    expect(started.status).toBe(202);
    expect(await t.waitForTask(started.body.task_id, { key: other })).toMatchObject({
      status: "completed",
      final_answer: "called fine",
    });
  }, 60_000);

  it("keeps a slow server of one tenant from holding the slots another tenant needs", async () => {
    const slow = await scripted(["wait"]);
    expect((await addServer("slow", { name: "slow", url: slow.url })).status).toBe(201);
    slow.onCall = async () => {
      await new Promise((r) => setTimeout(r, 14_000));
      return "late";
    };
    const plan = [call(0, "slow.wait", {}, ["out"]), finish(1, "${out}")];
    const tasks: string[] = [];
    for (let i = 0; i < 8; i++) {
      const started = await t.api("POST", "/v1/tasks", { namespace: "slow", plan });
      expect(started.status).toBe(202);
      tasks.push(started.body.task_id);
    }
    // Until the slow calls hold what they may.
    for (let i = 0; i < 200 && slow.inFlight.now < 2; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(slow.inFlight.now).toBe(2);

    const begun = performance.now();
    const trivial = await t.api("POST", "/v1/tasks", { plan: [finish(0, "done")] }, { key: other });
    expect(trivial.status).toBe(202);
    const done = await t.waitForTask(trivial.body.task_id, { key: other, timeoutMs: 60_000 });
    const took = performance.now() - begun;
    expect(done.status).toBe("completed");
    // Generous for a loaded machine; before, the slots were all held for 14 s at a time (209 s seen).
    expect(took).toBeLessThan(12_000);
    expect(slow.inFlight.most).toBeLessThanOrEqual(2);
    // The tenant's own calls wait their turn on the queue, not in a slot.
    const branch = await t.api("GET", `/v1/tasks/${tasks[7]}`);
    expect(branch.status).toBe(200);
    for (const id of tasks) await t.api("POST", `/v1/tasks/${id}/cancel`);
  }, 90_000);

  it("does not open a secret header for a record whose URL was rewritten; the new host gets nothing", async () => {
    const real = await scripted(["echo"]);
    const elsewhere = await scripted(["echo"]);
    const secret = "Bearer sealed-to-one-url-7d3a";
    expect(
      (
        await addServer("sealed", {
          name: "vault",
          url: real.url,
          headers: { Authorization: secret },
          secret_headers: ["Authorization"],
        })
      ).status,
    ).toBe(201);
    expect(real.headers.some((h) => h.authorization === secret)).toBe(true);

    // Someone who can write the table, not use the key, points the record elsewhere.
    const namespaces = t.stack.system.namespaces;
    const record = (await namespaces.getToolRecord("local", "sealed", "mcp:vault")) as Record<
      string,
      unknown
    > & { name: string };
    await namespaces.putToolRecord(
      "local",
      "sealed",
      "mcp:vault",
      { ...record, url: elsewhere.url },
      false,
    );

    // The plan update after the error gives up: the task ends, its error commit says why.
    t.llm.on("plan_update", {
      reasoning: "the server cannot be called",
      plan: [call(0, "vault.echo", {}, ["out"]), finish(1, "gave up")],
      resume_at: 1,
    });
    const started = await t.api("POST", "/v1/tasks", {
      namespace: "sealed",
      plan: [call(0, "vault.echo", {}, ["out"]), finish(1, "${out}")],
    });
    expect(started.status).toBe(202);
    const task = await t.waitForTask(started.body.task_id);
    expect(task).toMatchObject({ status: "completed", final_answer: "gave up" });
    const commits = (await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`)).body
      .commits as Array<{ error: { code: string; message: string } | null }>;
    const error = commits.find((c) => c.error)?.error;
    expect(error?.code).toBe("mcp_secret_unopenable");
    expect(error?.message).toMatch(/does not open for http:\/\/127\.0\.0\.1/);
    expect(elsewhere.headers).toEqual([]);
    expect(JSON.stringify(commits)).not.toContain("sealed-to-one-url");
  }, 60_000);
});
