import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { NamespaceConfig } from "../model";
import { builtinTools, describeTool, resolveTools } from "./registry";
import type { Tool } from "./tool";

const namespace = (allowed_tools: string[]): NamespaceConfig => ({
  name: "ns",
  allowed_tools,
  allowed_hosts: [],
  description: "",
  code_tools: [],
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
    expect([...all.keys()].sort()).toEqual([
      "code_task",
      "double",
      "http_request",
      "llm_generate",
      "run_code",
    ]);
  });

  it("refuses a code tool named like a built-in", () => {
    const clash = { ...codeTool, name: "http_request" };
    expect(() => resolveTools(namespace([]), [clash])).toThrow(/rename the code tool/);
  });
});
