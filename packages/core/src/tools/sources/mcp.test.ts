/**
 * The MCP source's cache of `tools/list`: trusted for MCP_TOOLS_TTL_MS, listed
 * again after it (saved in the record), and kept when the server does not answer
 * the new listing or answers one that registration would refuse (logged). The wire itself is tested against a real MCP server in
 * test/system/mcp.test.ts; here the client port is scripted so that the clock
 * can move.
 */
import { describe, expect, it } from "vitest";
import type { NamespaceConfig } from "../../model";
import { LOOPBACK_OPENED } from "../../net/outbound-policy";
import { silentLog } from "../../ports/log";
import { MCP_TOOLS_TTL_MS, mcpToolSource } from "./mcp";
import type { McpClient, McpServerRecord, McpToolInfo } from "./mcp-shapes";

const info = (name: string): McpToolInfo => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: "object" },
});

const T0 = Date.parse("2026-11-26T10:00:00Z");

function harness(listing: () => McpToolInfo[]) {
  let now = T0;
  const saved: Array<{ tools: string[]; at: string }> = [];
  let lists = 0;
  const warnings: Array<{ message: string; extra?: Record<string, unknown> }> = [];
  const client: McpClient = {
    async listTools() {
      lists += 1;
      return listing();
    },
    async callTool() {
      throw new Error("not called here");
    },
  };
  const source = mcpToolSource({
    client,
    secrets: { seal: async (s) => s, open: async (s) => s },
    now: () => now,
    outbound: LOOPBACK_OPENED,
    log: { ...silentLog, warn: (message, extra) => warnings.push({ message, extra }) },
    saveTools: async (_tenant, _namespace, _server, tools, at) => {
      saved.push({ tools: tools.map((t) => t.name), at });
    },
  });
  const record: McpServerRecord = {
    kind: "mcp",
    name: "every",
    url: "http://127.0.0.1:9/mcp",
    headers: {},
    secret_headers: [],
    allow: null,
    tools: [info("echo")],
    listed_at: new Date(T0).toISOString(),
  };
  const namespace = { name: "ns", allowed_hosts: ["127.0.0.1"] } as unknown as NamespaceConfig;
  return {
    /** The tools as a step's call sees them (`refresh`), or as the API does. */
    names: async (r: McpServerRecord = record, refresh = true) =>
      (await source.tools("tnt", namespace, r, { refresh })).map((t) => t.name),
    advance: (ms: number) => {
      now += ms;
    },
    record,
    saved,
    warnings,
    lists: () => lists,
  };
}

describe("the MCP source's tools/list cache", () => {
  it("trusts the stored list within the TTL and lists again after it, saving the new list", async () => {
    const h = harness(() => [info("echo"), info("get-sum")]);
    expect(await h.names()).toEqual(["every.echo"]);
    h.advance(MCP_TOOLS_TTL_MS);
    expect(await h.names()).toEqual(["every.echo"]);
    expect(h.lists()).toBe(0);

    h.advance(1);
    expect(await h.names()).toEqual(["every.echo", "every.get-sum"]);
    expect(h.lists()).toBe(1);
    expect(h.saved).toEqual([
      { tools: ["echo", "get-sum"], at: new Date(T0 + MCP_TOOLS_TTL_MS + 1).toISOString() },
    ]);
  });

  it("lists a server never listed at once", async () => {
    const h = harness(() => [info("echo")]);
    expect(await h.names({ ...h.record, tools: [], listed_at: null })).toEqual(["every.echo"]);
    expect(h.lists()).toBe(1);
  });

  it("keeps the stored list when the server does not answer the new listing", async () => {
    const h = harness(() => {
      throw new Error("ECONNREFUSED");
    });
    h.advance(MCP_TOOLS_TTL_MS + 1);
    expect(await h.names()).toEqual(["every.echo"]);
    expect(h.lists()).toBe(1);
    expect(h.saved).toEqual([]);
  });

  it("never lists on the API's request path: a stale list is answered as stored", async () => {
    const h = harness(() => [info("echo"), info("get-sum")]);
    h.advance(MCP_TOOLS_TTL_MS * 10);
    expect(await h.names(h.record, false)).toEqual(["every.echo"]);
    expect(h.lists()).toBe(0);
  });

  it("keeps the stored list when a relist names a tool twice, and reads a stored twice-named list first-name-wins", async () => {
    const h = harness(() => [info("x"), info("x"), info("y")]);
    h.advance(MCP_TOOLS_TTL_MS + 1);
    expect(await h.names()).toEqual(["every.echo"]);
    expect(h.lists()).toBe(1);
    expect(h.saved).toEqual([]);
    expect(h.warnings).toMatchObject([
      { extra: { tenant_id: "tnt", server: "every", code: "mcp_duplicate_tool" } },
    ]);
    const stored = { ...h.record, tools: [info("x"), info("x"), info("z")] };
    expect(await h.names(stored, false)).toEqual(["every.x", "every.z"]);
  });

  it("keeps the stored list when a relist gives a tool an inputSchema out of bounds, and logs why", async () => {
    const h = harness(() => [
      info("echo"),
      { name: "self", description: "", input_schema: { type: "object", $ref: "#" } },
    ]);
    h.advance(MCP_TOOLS_TTL_MS + 1);
    expect(await h.names()).toEqual(["every.echo"]);
    expect(h.lists()).toBe(1);
    expect(h.saved).toEqual([]);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]?.extra).toMatchObject({
      namespace: "ns",
      server: "every",
      code: "invalid_schema",
    });
    expect(h.warnings[0]?.extra?.reason).toMatch(
      /the inputSchema of the tool 'self' of the MCP server 'every'.*leads back to itself/,
    );
    // Left out by the allow list, the same listing is taken.
    expect(await h.names({ ...h.record, allow: ["echo"] })).toEqual(["every.echo"]);
    expect(h.saved).toHaveLength(1);
  });

  it("applies the server's allow list to a fresh listing", async () => {
    const h = harness(() => [info("echo"), info("get-sum"), info("get-env")]);
    h.advance(MCP_TOOLS_TTL_MS + 1);
    expect(await h.names({ ...h.record, allow: ["echo", "get-sum"] })).toEqual([
      "every.echo",
      "every.get-sum",
    ]);
  });
});
