/**
 * The shape every JSON value must have to be stored, checked once where values
 * come in (a request body, a step's outputs, a plan): at most
 * {@link MAX_JSON_DEPTH} levels of objects and arrays, as DynamoDB allows, no
 * number that the store cannot give back exactly, and none of the keys that
 * JavaScript treats as an object's machinery ({@link FORBIDDEN_KEYS}). `JSON.parse` makes `"__proto__"` an own key, but the
 * next copy that assigns it (`copy[key] = value`, the DynamoDB marshaller) sets
 * the prototype instead, and the value is lost or the write fails.
 *
 * The walk is iterative, so that a value nested 100,000 levels deep is measured
 * without exhausting the stack.
 */

/** The most levels of objects and arrays in one value (DynamoDB's own limit). */
export const MAX_JSON_DEPTH = 32;

/** Keys refused at any depth. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set([
  "__proto__",
  "constructor",
  "prototype",
]);

/** The smallest magnitude of a number DynamoDB keeps (besides 0). */
const SMALLEST_NUMBER = 1e-130;

export interface ShapeProblem {
  code: "too_deep" | "forbidden_key" | "unstorable_number";
  /** Where, as a path from the value's top (`inputs.a.b`, `[0].x`). */
  path: string;
  message: string;
}

/**
 * The first problem of a value's shape, or null. `where` names the value in the
 * message (`the request body`, `the variable 'x'`).
 *
 * @example
 * shapeProblem(JSON.parse('{"a": {"__proto__": 1}}'), "the request body")
 * // { code: "forbidden_key", path: "a.__proto__", message: "the request body has the key '__proto__' at a.__proto__: ..." }
 */
export function shapeProblem(
  value: unknown,
  where: string,
  maxDepth = MAX_JSON_DEPTH,
  forbidden: ReadonlySet<string> = FORBIDDEN_KEYS,
): ShapeProblem | null {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [
    { value, depth: 0, path: "" },
  ];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value === "number" && !storable(next.value)) {
      return {
        code: "unstorable_number",
        path: next.path,
        message: `${where} has the number ${next.value} at ${next.path || "its top"}, which cannot be stored exactly: numbers are at most 2^53 - 1 in size and, besides 0, at least 1e-130; send it as a string`,
      };
    }
    if (typeof next.value !== "object" || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > maxDepth) {
      return {
        code: "too_deep",
        path: next.path,
        message: `${where} nests objects and arrays more than ${maxDepth} levels deep (at ${next.path || "its top"}); flatten it, or send the deep part as a JSON string`,
      };
    }
    if (Array.isArray(next.value)) {
      next.value.forEach((element, i) => {
        stack.push({ value: element, depth, path: `${next.path}[${i}]` });
      });
      continue;
    }
    for (const [key, element] of Object.entries(next.value)) {
      const path = next.path === "" ? key : `${next.path}.${key}`;
      if (forbidden.has(key)) {
        return {
          code: "forbidden_key",
          path,
          message: `${where} has the key '${key}' at ${path}: the keys ${[...forbidden].map((k) => `'${k}'`).join(", ")} are not accepted in any object; rename it`,
        };
      }
      stack.push({ value: element, depth, path });
    }
  }
  return null;
}

/**
 * A number the store gives back as it was: finite, within JavaScript's safe
 * integers (the DynamoDB document client refuses to read larger ones back), and
 * not below DynamoDB's smallest magnitude.
 */
function storable(n: number): boolean {
  const size = Math.abs(n);
  return (
    Number.isFinite(n) && size <= Number.MAX_SAFE_INTEGER && (n === 0 || size >= SMALLEST_NUMBER)
  );
}

/** The levels of objects and arrays in a value (0 for a scalar), counted without recursion. */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value !== "object" || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > deepest) deepest = depth;
    for (const element of Object.values(next.value)) stack.push({ value: element, depth });
  }
  return deepest;
}
