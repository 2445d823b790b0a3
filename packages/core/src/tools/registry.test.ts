import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { NamespaceConfig } from "../model";
import { describeTool } from "./describe";
import {
  builtinTools,
  resolveTools,
  type ToolRecord,
  ToolRegistry,
  type ToolSource,
} from "./registry";
import type { Tool } from "./tool";

const namespace = (allowed_tools: string[]): NamespaceConfig => ({
  name: "ns",
  allowed_tools,
  allowed_hosts: [],
  description: "",
  code_tools: [],
  http_tools: [],
  mcp_servers: [],
});

const codeTool: Tool<{ n: number }> = {
  name: "double",
  description: "Doubles n.",
  input: z.object({ n: z.number() }),
  run: async ({ n }) => ({ value: n * 2 }),
};

describe("builtinTools", () => {
  it("has llm_generate and http_request under their names", () => {
    const tools = builtinTools();
    expect(tools.get("llm_generate")?.name).toBe("llm_generate");
    expect(tools.get("http_request")?.name).toBe("http_request");
  });
});

describe("describeTool", () => {
  it("gives the input as JSON Schema, defaults optional, with field descriptions", () => {
    const described = describeTool(builtinTools().get("http_request")!);
    expect(described.name).toBe("http_request");
    expect(described.description).toContain("{status, headers, body}");
    expect(described.input_schema).toMatchObject({
      type: "object",
      required: ["url"],
      properties: { method: { enum: ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] } },
    });
    expect(described.input_schema).not.toHaveProperty("$schema");
  });

  it.each([...builtinTools().values()])("describes every input field of $name", (tool) => {
    const schema = describeTool(tool).input_schema as { properties: Record<string, object> };
    for (const property of Object.values(schema.properties)) {
      expect(property).toHaveProperty("description");
    }
  });
});

describe("resolveTools", () => {
  it("allows listed built-ins and the namespace's code tools without listing them", () => {
    const { all, allowed } = resolveTools(namespace(["llm_generate", "nope"]), [codeTool]);
    expect([...allowed].sort()).toEqual(["double", "llm_generate"]);
    expect([...all.keys()].sort()).toEqual([...builtinTools().keys(), "double"].sort());
  });

  it("refuses a code tool named like a built-in", () => {
    const clash = { ...codeTool, name: "http_request" };
    expect(() => resolveTools(namespace([]), [clash])).toThrow(/rename the code tool/);
  });
});

describe("ToolRegistry", () => {
  const records: Record<string, ToolRecord> = {
    double: { name: "double" },
    "mcp:files": { kind: "mcp", name: "files" },
  };
  const reads: string[] = [];
  const store = {
    listToolRecords: async () => {
      reads.push("list");
      return Object.values(records);
    },
    getToolRecord: async (_t: string, _n: string, key: string) => {
      reads.push(`get ${key}`);
      return records[key] ?? null;
    },
  };
  const sources: ToolSource[] = [
    { kind: "code", tools: async () => [{ ...codeTool, source: "code" }] },
    {
      kind: "mcp",
      tools: async (_t, _n, record) => [
        { ...codeTool, name: `${record.name}.read`, source: "mcp" },
        { ...codeTool, name: `${record.name}.write`, source: "mcp" },
      ],
    },
  ];
  const ns = { ...namespace(["llm_generate"]), code_tools: ["double"], mcp_servers: ["files"] };

  it("gives every reader the same tools: built-ins allowed by name, own tools always", async () => {
    const registry = new ToolRegistry(builtinTools().values(), sources, store);
    const tools = await registry.forNamespace("t1", ns);
    expect([...tools.allowed].sort()).toEqual([
      "double",
      "files.read",
      "files.write",
      "llm_generate",
    ]);
    expect(describeTool(tools.all.get("files.read")!).source).toBe("mcp");
  });

  it("loads only the called tool for a calling, and nothing for a built-in", async () => {
    const registry = new ToolRegistry(builtinTools().values(), sources, store);
    reads.length = 0;
    const builtin = await registry.forCall("t1", ns, "llm_generate");
    expect(reads).toEqual([]);
    expect(builtin.allowed.has("llm_generate")).toBe(true);
    const mcp = await registry.forCall("t1", ns, "files.write");
    expect(reads).toEqual(["get mcp:files"]);
    expect(mcp.allowed.has("files.write")).toBe(true);
    expect(mcp.all.has("double")).toBe(false);
  });

  it("reads no record for a name the namespace's snapshot does not list", async () => {
    const registry = new ToolRegistry(builtinTools().values(), sources, store);
    reads.length = 0;
    const other = await registry.forCall("t1", ns, "other.read");
    expect(reads).toEqual([]);
    expect(other.all.has("other.read")).toBe(false);
  });

  it("refuses an own tool that takes a built-in's name", async () => {
    const clash: ToolSource = {
      kind: "code",
      tools: async () => [{ ...codeTool, name: "llm_generate" }],
    };
    const registry = new ToolRegistry(builtinTools().values(), [clash], store);
    await expect(registry.forNamespace("t1", ns)).rejects.toThrow(/a built-in tool; rename it/);
  });
});
