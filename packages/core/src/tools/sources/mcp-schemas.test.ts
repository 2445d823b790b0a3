/**
 * An MCP server's `inputSchema`s are a tool server's input to the shared process:
 * a pattern that backtracks is checked in linear time, and a schema out of
 * bounds (an anyOf chain that doubles at each level, a self-reference) leaves the
 * input to the server's own check instead of hanging or overflowing every call.
 */

import { describe, expect, it } from "vitest";
import type { NamespaceConfig } from "../../model";
import { LOOPBACK_OPENED } from "../../net/outbound-policy";
import { type McpServerRecord, type McpToolInfo, mcpToolSource } from "./mcp";

function chain(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { [`l${levels}`]: { type: "string" } };
  for (let i = 0; i < levels; i++) {
    defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  }
  return { type: "object", properties: { x: { $ref: "#/$defs/l0" } }, $defs: defs };
}

const tools: McpToolInfo[] = [
  {
    name: "redos",
    description: "",
    input_schema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } },
  },
  { name: "chain", description: "", input_schema: chain(19) },
  { name: "self", description: "", input_schema: { type: "object", $ref: "#" } },
];

async function listed() {
  const source = mcpToolSource({
    client: {
      listTools: async () => tools,
      callTool: async () => {
        throw new Error("not called here");
      },
    },
    secrets: { seal: async (s) => s, open: async (s) => s },
    now: () => Date.parse("2026-11-26T10:00:00Z"),
    outbound: LOOPBACK_OPENED,
    saveTools: async () => undefined,
  });
  const record: McpServerRecord = {
    kind: "mcp",
    name: "hostile",
    url: "http://127.0.0.1:9/mcp",
    headers: {},
    secret_headers: [],
    allow: null,
    tools,
    listed_at: "2026-11-26T10:00:00.000Z",
  };
  const namespace = { name: "ns", allowed_hosts: ["127.0.0.1"] } as unknown as NamespaceConfig;
  const list = await source.tools("acme", namespace, record);
  return new Map(list.map((tool) => [tool.name, tool]));
}

describe("an MCP server's input schemas", () => {
  it("checks a backtracking pattern in linear time", async () => {
    const redos = (await listed()).get("hostile.redos");
    const started = Date.now();
    const checked = redos?.input.safeParse({ s: `${"a".repeat(50_000)}!` });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(checked?.success).toBe(false);
    expect(redos?.input.safeParse({ s: "aaa" }).success).toBe(true);
  });

  it.each(["hostile.chain", "hostile.self"])(
    "leaves %s's input to the server when its schema is out of bounds, without hanging",
    async (name) => {
      const tool = (await listed()).get(name);
      expect(tool).toBeDefined();
      const started = Date.now();
      expect(tool?.input.safeParse({ x: 1 }).success).toBe(true);
      expect(tool?.input.safeParse("not an object").success).toBe(false);
      expect(Date.now() - started).toBeLessThan(5_000);
    },
  );
});
