/**
 * The JSON Schema sent as `response_format.json_schema.schema`, generated from
 * the zod schema that then parses the answer. OpenAI's strict mode accepts only a
 * subset of JSON Schema; `toLlmJsonSchema` rewrites the easy differences, and
 * `isStrictJsonSchema` (strict-schema.ts) says whether the result fits, so the
 * adapter asks for `strict: true` only when the server will accept it. Loaded
 * with a session's first call (session-calls.ts).
 */
import * as z from "zod";

type JsonSchema = Record<string, unknown>;

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
