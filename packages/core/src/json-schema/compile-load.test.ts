/**
 * The JSON Schema compiler loads on first need (`loadJsonSchemaCompiler`), not
 * with the module that compiles: before it is loaded, a schema out of bounds is
 * still the tenant's fault (invalid_schema), and any other compile is a wiring
 * bug that says so, never a refusal of the tenant's schema or plan. Each test
 * imports the modules afresh, as a new process would.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { NamespaceStore } from "../store/namespace-store";

beforeEach(() => {
  vi.resetModules();
});

const fresh = () => import("./compile");

describe("the JSON Schema compiler, loaded on first need", () => {
  it("is not loaded by importing the module that compiles", async () => {
    const { jsonSchemaCompilerLoaded } = await fresh();
    expect(jsonSchemaCompilerLoaded()).toBe(false);
  });

  it("refuses a schema out of bounds before it is loaded, as the tenant's fault", async () => {
    const { compileJsonSchema } = await fresh();
    const deep: Record<string, unknown> = { type: "string" };
    let schema = deep;
    for (let i = 0; i < 200; i++) schema = { type: "array", items: schema };
    expect(() => compileJsonSchema(schema, "input_schema")).toThrow(
      expect.objectContaining({ code: "invalid_schema" }),
    );
  });

  it("says a compile before the load is a wiring bug (internal), naming what to await", async () => {
    const { compileJsonSchema } = await fresh();
    expect(() => compileJsonSchema({ type: "boolean" }, "the schema")).toThrow(
      expect.objectContaining({
        kind: "internal",
        code: "json_schema_compiler_not_loaded",
        message: expect.stringContaining("loadJsonSchemaCompiler"),
      }),
    );
  });

  it("compiles once loaded; concurrent loads share one", async () => {
    const { compileJsonSchema, jsonSchemaCompilerLoaded, loadJsonSchemaCompiler } = await fresh();
    await Promise.all([loadJsonSchemaCompiler(), loadJsonSchemaCompiler()]);
    expect(jsonSchemaCompilerLoaded()).toBe(true);
    const schema = compileJsonSchema({ type: "boolean" }, "the schema");
    expect(schema.safeParse(true).success).toBe(true);
    expect(schema.safeParse("yes").success).toBe(false);
  });

  it("does not turn an unloaded compiler into a problem of an ask_human plan or answer", async () => {
    const { answerSchemaProblem, checkAnswer, askHumanTool } = await import("../tools/ask-human");
    expect(() => answerSchemaProblem({ type: "boolean" })).toThrow(
      expect.objectContaining({ code: "json_schema_compiler_not_loaded" }),
    );
    expect(() => checkAnswer({ type: "boolean" }, true)).toThrow(
      expect.objectContaining({ code: "json_schema_compiler_not_loaded" }),
    );
    // The tool says what it needs; once prepared, its input is checked in full.
    await askHumanTool.prepare?.();
    expect(answerSchemaProblem({ type: "boolean" })).toBeNull();
    expect(
      askHumanTool.input.safeParse({ question: "ok?", schema: { type: "boolean" }, default: "no" })
        .success,
    ).toBe(false);
  });

  it("is loaded by the registry for a call of ask_human, not of another built-in", async () => {
    const { builtinTools, ToolRegistry } = await import("../tools/registry");
    const { jsonSchemaCompilerLoaded } = await fresh();
    const registry = new ToolRegistry(builtinTools().values());
    await registry.forCall(
      "t",
      { name: "default", allowed_tools: ["llm_generate"] } as never,
      "llm_generate",
    );
    expect(jsonSchemaCompilerLoaded()).toBe(false);
    await registry.forCall(
      "t",
      { name: "default", allowed_tools: ["ask_human"] } as never,
      "ask_human",
    );
    expect(jsonSchemaCompilerLoaded()).toBe(true);
  });

  it("is loaded by resolving a namespace, against whose tools plans are then checked", async () => {
    const { createNamespaces } = await import("../service/namespaces");
    const { MemoryItemStore } = await import("../testing/memory/memory-item-store");
    const { builtinTools } = await import("../tools/registry");
    const { systemClock } = await import("../ports/clock");
    const { jsonSchemaCompilerLoaded } = await fresh();
    const { namespaces } = createNamespaces(
      new NamespaceStore(new MemoryItemStore()),
      systemClock,
      builtinTools().values(),
      [],
    );
    expect(jsonSchemaCompilerLoaded()).toBe(false);
    await namespaces.resolve("t", "default");
    expect(jsonSchemaCompilerLoaded()).toBe(true);
  });
});
