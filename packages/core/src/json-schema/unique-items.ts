/**
 * `uniqueItems` in time linear in the array's size. Ajv compares every pair of
 * items that are not all of one scalar type: 20,000 distinct small objects
 * (180 KB of JSON, well under a request body) took 87 s and held the process.
 * Here each item is written once in a canonical form (object keys sorted) and
 * looked up in a set, which is what JSON Schema's equality of instances is.
 */
import type { KeywordDefinition } from "ajv/dist/2020.js";

/** The item as text that is equal for equal JSON values, whatever the order of keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Whether no two items of `items` are equal JSON values. */
export function allUnique(items: readonly unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    const key = canonical(item);
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}

/** Ajv's definition of the keyword, in place of its own. */
export const uniqueItemsKeyword: KeywordDefinition = {
  keyword: "uniqueItems",
  type: "array",
  schemaType: "boolean",
  errors: false,
  validate: (unique: boolean, data: unknown[]) => !unique || allUnique(data),
};
