import { describe, expect, it, vi } from "vitest";
import { NamespaceStore } from "../store/namespace-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { ManualClock } from "../testing/memory-system";
import { codeToolSource } from "../tools/code-tool";
import { llmGenerateTool } from "../tools/llm-generate";
import { NamespaceInput } from "./namespace-input";
import { createNamespaces } from "./namespaces";

const double = {
  name: "double",
  description: "Doubles a number",
  input_schema: { type: "object", properties: { n: { type: "number" } } },
  language: "javascript" as const,
  code: "return inputs.n * 2;",
};

function setup() {
  const items = new MemoryItemStore();
  const clock = new ManualClock();
  const { namespaces } = createNamespaces(
    new NamespaceStore(items),
    clock,
    ["llm_generate", "http_get"].map((name) => ({ ...llmGenerateTool, name })),
    [codeToolSource],
  );
  return { items, clock, namespaces };
}

describe("NamespaceService.resolve", () => {
  it("answers the config and the code tools' records from one get and one query", async () => {
    const { items, namespaces } = setup();
    await namespaces.put("acme", "ops", NamespaceInput.parse({ allowed_tools: ["http_get"] }));
    await namespaces.addCodeTool("acme", "ops", double);
    const get = vi.spyOn(items, "get");
    const query = vi.spyOn(items, "query");

    const resolved = await namespaces.resolve("acme", "ops");

    expect(get).toHaveBeenCalledTimes(1);
    expect(query).toHaveBeenCalledTimes(1);
    expect(resolved.config).toEqual(await namespaces.config("acme", "ops"));
    expect(resolved.config.code_tools).toEqual(["double"]);
    expect(resolved.codeTools.map((t) => t.code)).toEqual([double.code]);
  });

  it("answers the built-in default namespace when the tenant has not stored one", async () => {
    const { namespaces } = setup();
    const resolved = await namespaces.resolve("acme", "default");
    expect(resolved.config.allowed_tools).toEqual(["llm_generate", "http_get"]);
    expect(resolved.codeTools).toEqual([]);
  });

  it("refuses a missing namespace with a 404", async () => {
    const { namespaces } = setup();
    await expect(namespaces.resolve("acme", "nope")).rejects.toThrow(
      expect.objectContaining({ kind: "not_found" }),
    );
  });
});

describe("NamespaceService.addCodeTool", () => {
  it("stamps the tool with the service clock", async () => {
    const { clock, namespaces } = setup();
    clock.advance(60_000);
    const saved = await namespaces.addCodeTool("acme", "default", double);
    expect(saved.created_at).toBe("2026-01-01T00:01:00.000Z");
    expect((await namespaces.getCodeTool("acme", "default", "double"))?.created_at).toBe(
      saved.created_at,
    );
  });

  it("reads only the namespace item to know that it exists", async () => {
    const { items, namespaces } = setup();
    await namespaces.put("acme", "ops", NamespaceInput.parse({}));
    const query = vi.spyOn(items, "query");
    await namespaces.addCodeTool("acme", "ops", double);
    expect(query).not.toHaveBeenCalled();
  });

  it("refuses a missing namespace with a 404 before a built-in tool's name", async () => {
    const { namespaces } = setup();
    await expect(
      namespaces.addCodeTool("acme", "nope", { ...double, name: "http_get" }),
    ).rejects.toThrow(expect.objectContaining({ kind: "not_found" }));
  });

  it.each([
    ["a built-in tool's name", "http_get", "tool_name_taken"],
    ["a name the namespace already has", "double", "tool_exists"],
  ])("refuses %s with a 422", async (_, name, code) => {
    const { namespaces } = setup();
    await namespaces.addCodeTool("acme", "default", double);
    await expect(namespaces.addCodeTool("acme", "default", { ...double, name })).rejects.toThrow(
      expect.objectContaining({ kind: "invalid", code }),
    );
  });
});
