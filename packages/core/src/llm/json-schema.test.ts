import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Plan } from "../plan/schema";
import { toLlmJsonSchema } from "./json-schema";
import { isStrictJsonSchema } from "./strict-schema";

describe("toLlmJsonSchema", () => {
  it("gives a closed object with every field required and no zod noise", () => {
    const schema = toLlmJsonSchema(
      z.object({ result: z.boolean(), n: z.number().int(), tries: z.number().default(1) }),
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        result: { type: "boolean" },
        n: { type: "integer" },
        tries: { type: "number" },
      },
      required: ["result", "n", "tries"],
      additionalProperties: false,
    });
  });

  it("turns discriminated unions into anyOf and const into enum", () => {
    const schema = toLlmJsonSchema(
      z.object({
        step: z.discriminatedUnion("kind", [
          z.object({ kind: z.literal("a"), x: z.string() }),
          z.object({ kind: z.literal("b"), y: z.string() }),
        ]),
      }),
    );
    const step = (schema.properties as Record<string, Record<string, unknown>>).step!;
    expect(step.oneOf).toBeUndefined();
    expect(step.anyOf).toHaveLength(2);
    expect(JSON.stringify(step)).toContain('"kind":{"type":"string","enum":["a"]}');
  });

  it("keeps a property whose name is a keyword", () => {
    const schema = toLlmJsonSchema(z.object({ default: z.string(), const: z.number() }));
    expect(Object.keys(schema.properties as object)).toEqual(["default", "const"]);
  });
});

describe("isStrictJsonSchema", () => {
  it.each([
    ["a closed object", z.object({ result: z.boolean(), explanation: z.string() })],
    ["nullable fields", z.object({ note: z.string().nullable() })],
    ["nested arrays of objects", z.object({ items: z.array(z.object({ x: z.enum(["a", "b"]) })) })],
  ])("accepts %s", (_, schema) => {
    expect(isStrictJsonSchema(toLlmJsonSchema(schema))).toBe(true);
  });

  it.each([
    ["an optional field", z.object({ note: z.string().optional() })],
    ["an unknown field", z.object({ value: z.unknown() })],
    ["a record", z.object({ vars: z.record(z.string(), z.string()) })],
    ["an array at the root", z.array(z.string())],
    ["the plan language", z.object({ reasoning: z.string(), plan: Plan })],
  ])("refuses %s", (_, schema) => {
    expect(isStrictJsonSchema(toLlmJsonSchema(schema))).toBe(false);
  });

  it("refuses nesting deeper than 10 objects", () => {
    let schema: z.ZodType = z.object({ leaf: z.string() });
    for (let i = 0; i < 11; i++) schema = z.object({ inner: schema });
    expect(isStrictJsonSchema(toLlmJsonSchema(schema))).toBe(false);
  });
});
