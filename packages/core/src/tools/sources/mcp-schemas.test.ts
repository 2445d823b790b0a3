/**
 * An MCP server's `inputSchema`s are a tool server's input to the shared process:
 * a listing whose callable tool has a schema out of bounds (an anyOf chain that
 * doubles at each level, a self-reference, a backreference) is refused before it
 * is stored ({@link listingError}); a pattern that backtracks is checked in linear
 * time; and a schema out of bounds in a record stored before that refusal leaves
 * the input to the server's own check instead of hanging or overflowing every call.
 */

import { beforeAll, describe, expect, it } from "vitest";
import { loadJsonSchemaCompiler } from "../../json-schema/compile";
import type { NamespaceConfig } from "../../model";
import { LOOPBACK_OPENED } from "../../net/outbound-policy";
import { mcpToolSource } from "./mcp";
import { listingError, MAX_MCP_TOOLS } from "./mcp-listing";
import type { McpServerRecord, McpToolInfo } from "./mcp-shapes";

beforeAll(loadJsonSchemaCompiler);

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
  {
    name: "backref",
    description: "",
    input_schema: { type: "object", properties: { s: { type: "string", pattern: "^(a)\\1$" } } },
  },
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

describe("a listing's input schemas, before it is stored", () => {
  it.each([
    ["chain", /more than 2000 nodes once each \$ref is written out/],
    ["self", /leads back to itself/],
    ["backref", /cannot be matched in linear time/],
  ])("refuses %s with invalid_schema naming the server, the tool and the problem", (name, why) => {
    const error = listingError({ name: "hostile", allow: null }, [
      tools[0]!,
      tools.find((t) => t.name === name)!,
    ]);
    expect(error).toMatchObject({
      code: "invalid_schema",
      details: { server: "hostile", tool: name },
    });
    expect(error?.message).toContain(
      `the inputSchema of the tool '${name}' of the MCP server 'hostile'`,
    );
    expect(error?.message).toMatch(why);
    expect(error?.message).toMatch(/leave the tool out with the server's "tools" list/);
  });

  it("takes a backtracking pattern (matched in linear time) and tools the allow list leaves out", () => {
    expect(listingError({ name: "hostile", allow: null }, [tools[0]!])).toBeNull();
    expect(listingError({ name: "hostile", allow: ["redos"] }, tools)).toBeNull();
  });

  it("refuses more callable tools than MAX_MCP_TOOLS before compiling any, unless the allow list narrows them", () => {
    const many = Array.from({ length: MAX_MCP_TOOLS + 1 }, (_, i) => ({
      name: `t${i}`,
      description: "",
      input_schema: { type: "object", properties: { [`a${i}`]: { type: "string" } } },
    }));
    const error = listingError({ name: "wide", allow: null }, many);
    expect(error).toMatchObject({ code: "mcp_too_many_tools" });
    expect(error?.message).toMatch(/lists 201 tools; at most 200/);
    expect(listingError({ name: "wide", allow: ["t0", "t7"] }, many)).toBeNull();
  });

  it("refuses a name given twice first, as mcp_duplicate_tool", () => {
    expect(listingError({ name: "hostile", allow: null }, [tools[2]!, tools[2]!])).toMatchObject({
      code: "mcp_duplicate_tool",
    });
  });
});

describe("an MCP server's input schemas stored before the bounds", () => {
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
