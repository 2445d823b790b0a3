/**
 * A tool's input as the planner's prompt shows it: one line per parameter with
 * its type and description, instead of the JSON Schema. The schema's bookkeeping
 * (`additionalProperties`, `propertyNames`, string lengths, formats) was half the
 * first plan prompt's tokens, and a model with a 4,096-token context cannot spare
 * them; where the server enforces the plan's shape, the precise plan schema
 * carries each tool's whole input schema anyway.
 */

type Schema = Record<string, unknown>;

/**
 * The parameters of an object schema, one per line: `name: type. description`,
 * with `?` after an optional name.
 *
 * @example
 * paramsText({ type: "object", properties: { query: { type: "string", description: "What to find." } }, required: ["query"] })
 * // "query: string. What to find."
 */
export function paramsText(schema: Schema, indent = "  "): string {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const lines = Object.entries(properties).map(([name, property]) => {
    const description = typeof property.description === "string" ? ` ${property.description}` : "";
    // A description usually names its default already.
    const fallback =
      "default" in property && !/default/i.test(description)
        ? ` Default ${JSON.stringify(property.default)}.`
        : "";
    return `${indent}${name}${required.has(name) ? "" : "?"}: ${typeText(property)}.${description}${fallback}`;
  });
  return lines.length ? lines.join("\n") : `${indent}(no parameters)`;
}

/** A schema's type in a few words: `string`, `"a"|"b"`, `integer 1..50`, `array of {path, content}`. */
function typeText(schema: Schema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join("|");
  if ("const" in schema) return JSON.stringify(schema.const);
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(union)) return union.map(typeText).join(" or ");
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type;
  if (type === "array") {
    return schema.items && typeof schema.items === "object"
      ? `array of ${typeText(schema.items as Schema)}`
      : "array";
  }
  if (type === "object") {
    const names = Object.keys((schema.properties ?? {}) as Schema);
    if (names.length === 0) return "object";
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    return `{${names.map((n) => (required.has(n) ? n : `${n}?`)).join(", ")}}`;
  }
  if ((type === "integer" || type === "number") && ("minimum" in schema || "maximum" in schema)) {
    return `${type} ${schema.minimum ?? ""}..${schema.maximum ?? ""}`;
  }
  return typeof type === "string" ? type : "any";
}
