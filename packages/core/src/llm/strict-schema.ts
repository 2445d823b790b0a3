/**
 * Whether a JSON Schema fits OpenAI's strict structured outputs, which accept
 * only a subset of JSON Schema: the adapter asks for `strict: true` only when
 * the server will accept it. Apart from `json-schema.ts`, which generates the
 * schemas from zod, so that the adapters' start does not load that generator.
 */

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
