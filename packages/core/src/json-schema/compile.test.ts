import { beforeAll, describe, expect, it } from "vitest";
import { MAX_EXPANDED_NODES, MAX_SCHEMA_BYTES, schemaBoundsProblem } from "./bounds";
import { compileJsonSchema, loadJsonSchemaCompiler } from "./compile";

beforeAll(loadJsonSchemaCompiler);

/** An MCP-style `inputSchema` whose `$defs` double at each of `levels` levels. */
function anyOfChain(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { [`l${levels}`]: { type: "string" } };
  for (let i = 0; i < levels; i++) {
    defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  }
  return { type: "object", properties: { x: { $ref: "#/$defs/l0" } }, $defs: defs };
}

describe("compileJsonSchema", () => {
  it("checks a backtracking pattern against a long hostile string in linear time", () => {
    const schema = compileJsonSchema(
      {
        type: "object",
        properties: { s: { type: "string", pattern: "^(a+)+$" } },
        patternProperties: { "^(x+x+)+y$": { type: "number" } },
      },
      "input_schema",
    );
    const started = Date.now();
    const long = `${"a".repeat(100_000)}!`;
    const checked = schema.safeParse({ s: long, [`${"x".repeat(5000)}`]: "not a number" });
    // V8's engine would take longer than the universe's age; RE2 takes milliseconds.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(checked.success).toBe(false);
    expect(schema.safeParse({ s: "aaaa" }).success).toBe(true);
  });

  it("checks uniqueItems in linear time, equal objects whatever their keys' order", () => {
    const schema = compileJsonSchema({ type: "array", uniqueItems: true }, "schema");
    const distinct = Array.from({ length: 20_000 }, (_, i) => ({ a: i, b: [i] }));
    const started = Date.now();
    // Ajv's own pairwise comparison took 87 s for these 180 KB.
    expect(schema.safeParse(distinct).success).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(schema.safeParse([...distinct, { b: [7], a: 7 }]).success).toBe(false);
    expect(schema.safeParse([1, "1", [1], { 1: 1 }]).success).toBe(true);
  });

  it("refuses an anyOf chain that doubles at each level, and accepts a short one", () => {
    expect(() => compileJsonSchema(anyOfChain(19), "the MCP tool 'x.y'")).toThrow(
      /the MCP tool 'x.y': the schema has more than 2000 nodes once each \$ref is written out/,
    );
    const short = compileJsonSchema(anyOfChain(4), "short");
    expect(short.safeParse({ x: "s" }).success).toBe(true);
    expect(short.safeParse({ x: 1 }).success).toBe(false);
  });

  it.each([
    ["a reference to itself", { type: "object", $ref: "#" }, /leads back to itself/],
    [
      "a cycle through $defs",
      { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" },
      /leads back to itself/,
    ],
    ["a reference elsewhere", { $ref: "https://example.com/s.json" }, /only references inside/],
    ["a reference to nothing", { $ref: "#/$defs/none" }, /points at nothing/],
    ["a dynamic reference", { $dynamicRef: "#x" }, /uses \$dynamicRef/],
    ["a lookahead", { type: "string", pattern: "^(?=a)a$" }, /linear time/],
    ["a pattern too long", { type: "string", pattern: "a".repeat(1001) }, /at most 1000/],
  ])("refuses %s with invalid_schema", (_what, schema, message) => {
    let error: unknown;
    try {
      compileJsonSchema(schema as Record<string, unknown>, "input_schema");
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: "invalid_schema" });
    expect((error as Error).message).toMatch(message);
  });

  it("refuses the same schema for the same reason the second time in a process", () => {
    const schema = { type: "object", properties: { s: { type: "string", pattern: "^(b+)\\1$" } } };
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(() => compileJsonSchema(schema, "input_schema")).toThrow(/linear time/);
    }
  });

  it("refuses a schema over its size and depth", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "object", properties: { a: deep } };
    expect(schemaBoundsProblem(deep)).toMatch(/nests deeper than 64 levels/);
    const big = { type: "object", description: "x".repeat(MAX_SCHEMA_BYTES) };
    expect(schemaBoundsProblem(big)).toMatch(/bytes of JSON/);
    expect(MAX_EXPANDED_NODES).toBe(2000);
  });

  it("compiles a schema once, and reads draft-07 definitions", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { when: { $ref: "#/definitions/day" } },
      required: ["when"],
      additionalProperties: false,
      definitions: { day: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" } },
    };
    const first = compileJsonSchema(schema, "a");
    expect(compileJsonSchema(structuredClone(schema), "b")).toBe(first);
    expect(first.safeParse({ when: "2026-01-02" }).success).toBe(true);
    const wrong = first.safeParse({ when: "soon", extra: 1 });
    expect(wrong.success).toBe(false);
    const missing = first.safeParse({});
    expect(missing.error?.issues[0]?.path).toEqual(["when"]);
  });
});
