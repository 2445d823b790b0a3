/**
 * The JSON Schema sent as `response_format.json_schema.schema`, generated from
 * the zod schema that then parses the answer. OpenAI's strict mode accepts only a
 * subset of JSON Schema; `toLlmJsonSchema` rewrites the easy differences, and
 * `isStrictJsonSchema` says whether the result fits, so the adapter asks for
 * `strict: true` only when the server will accept it.
 */
import * as z from "zod";

type JsonSchema = Record<string, unknown>;

/** Keywords strict mode rejects (and that have no simple rewrite). */
const UNSUPPORTED = [
  "allOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
  "patternProperties",
  "unevaluatedProperties",
  "dependentRequired",
  "dependentSchemas",
  "minProperties",
  "maxProperties",
  "contains",
  "prefixItems",
  "uniqueItems",
];

/** OpenAI's documented limit on object nesting in strict mode. */
const MAX_DEPTH = 10;

/**
 * The JSON Schema of a zod schema for a structured-output request: the answer's
 * shape (io "output", so fields with defaults are required), without `$schema`
 * and `default`, with `oneOf` (zod's discriminated unions) as `anyOf`, `const` as
 * a one-value `enum`, and without the ±2^53 bounds zod puts on every integer.
 *
 * @example
 * toLlmJsonSchema(z.object({ result: z.boolean() }))
 * // { type: "object", properties: { result: { type: "boolean" } }, required: ["result"], additionalProperties: false }
 */
export function toLlmJsonSchema(schema: z.ZodType): JsonSchema {
  const generated = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" });
  const { $schema: _, ...rest } = generated as JsonSchema;
  return tidy(rest) as JsonSchema;
}

function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "default") continue;
    if (key === "oneOf") out.anyOf = tidy(value);
    else if (key === "const") out.enum = [value];
    else if ((key === "minimum" || key === "maximum") && isSafeIntegerBound(value)) continue;
    else if (key === "properties" || key === "$defs" || key === "definitions") {
      // Property names are data, not keywords: only their schemas are tidied.
      out[key] = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, sub]) => [name, tidy(sub)]),
      );
    } else out[key] = tidy(value);
  }
  return out;
}

function isSafeIntegerBound(value: unknown): boolean {
  return value === Number.MAX_SAFE_INTEGER || value === Number.MIN_SAFE_INTEGER;
}

/**
 * True when a schema fits OpenAI's strict structured outputs: an object at the
 * root, every object closed (`additionalProperties: false`) with all its
 * properties required, no "any" schema (`{}`, from `z.unknown()` or records), no
 * unsupported keyword, at most 10 levels of nesting.
 */
export function isStrictJsonSchema(schema: JsonSchema): boolean {
  if (schema.type !== "object") return false;
  return fits(schema, 0);
}

function fits(node: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH || node === null || typeof node !== "object" || Array.isArray(node)) {
    return false;
  }
  const s = node as JsonSchema;
  if (Object.keys(s).length === 0) return false;
  if (UNSUPPORTED.some((key) => key in s)) return false;
  for (const defs of [s.$defs, s.definitions]) {
    if (defs !== undefined && !Object.values(defs as JsonSchema).every((d) => fits(d, depth))) {
      return false;
    }
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.every((branch) => fits(branch, depth))) return false;
  if (!("type" in s)) return "anyOf" in s || "$ref" in s || "enum" in s;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes("object")) {
    const properties = (s.properties ?? {}) as JsonSchema;
    const required = Array.isArray(s.required) ? s.required : [];
    if (s.additionalProperties !== false) return false;
    if (!Object.keys(properties).every((name) => required.includes(name))) return false;
    if (!Object.values(properties).every((p) => fits(p, depth + 1))) return false;
  }
  if (types.includes("array") && !fits(s.items, depth + 1)) return false;
  return true;
}
