/**
 * `${name}` references in plan parameters (spec: plan-language.md, "References").
 *
 * Syntax: `${` name (`.` segment)* `}`, where the name is a variable name (letters,
 * digits and _, as StackVM allows) and a segment is an object key or an array index
 * (any characters but `.`, `{`, `}`, `$`, `\` and whitespace). Spaces just inside the
 * braces are allowed (`${ name }`). A `${` that does not open such a reference, such
 * as a JavaScript template `${a + b}`, is left as it is; `\${` is always a literal
 * `${` (the backslash is removed).
 *
 * Values that replace a reference are never scanned again, so a variable holding
 * the text `${secret}` cannot pull another variable in.
 */
import { StepError } from "../errors";
import { listNames } from "./problems";

/** What the VM knows about a name: its value, or that it does not exist. */
export type Lookup = ((name: string) => { found: true; value: unknown } | { found: false }) & {
  /** The names that exist, listed in the error about an unknown one. Optional. */
  readonly names?: () => Iterable<string>;
};

/** One reference found in a value, for validation and for loading what a step needs. */
export interface Reference {
  /** The variable: what must exist. */
  name: string;
  /** Keys and indices after the name (`${a.0.b}`: `["0", "b"]`). */
  path: string[];
  /** Where the string holding it is, inside the value searched (keys and indices). */
  where: (string | number)[];
  /** The reference as written, e.g. `${facts.0}`. */
  text: string;
}

/**
 * Parameters nested deeper than this are refused: a plan never needs it, it bounds
 * recursion, and a stored plan (`plan[i].parameters`, three levels down in its
 * record) then stays within the store's 32 levels (`MAX_JSON_DEPTH`).
 */
export const MAX_VALUE_DEPTH = 28;

type Part = string | Omit<Reference, "where">;

/** A reference that did not resolve, in `stackvm` mode: its text stays. */
const UNRESOLVED = Symbol("unresolved");

const REFERENCE = /\\\$\{|\$\{\s*([A-Za-z0-9_]+)((?:\.[^\s.{}$\\]+)*)\s*\}/g;

/**
 * Splits a string into literal text (escapes removed) and references. Returns the
 * string itself when it holds neither, which is the common case and costs one scan.
 */
function parseTemplate(text: string): Part[] | string {
  if (!text.includes("${")) return text;
  const parts: Part[] = [];
  let literal = "";
  let last = 0;
  for (const match of text.matchAll(REFERENCE)) {
    literal += text.slice(last, match.index);
    last = match.index + match[0].length;
    const [whole, name, path] = match;
    if (name === undefined) {
      literal += "${";
      continue;
    }
    if (literal !== "") parts.push(literal);
    literal = "";
    parts.push({ name, path: path ? path.slice(1).split(".") : [], text: whole });
  }
  literal += text.slice(last);
  if (literal !== "") parts.push(literal);
  return parts;
}

/**
 * StackVM compatibility mode (`compat-mode.ts`) at run time: as the original VM
 * did, a reference that does not resolve stays as its text, and only strings at
 * most `levels` deep are resolved (0: `value` itself when it is a string; 1: also
 * the values of an object such as `tool_params`); deeper ones stay as written.
 */
export interface StackvmResolution {
  levels: number;
}

/**
 * Resolves every reference in every string of `value`, at any depth of objects and
 * arrays; object keys are left as they are. A string that is exactly one reference
 * takes the referenced value with its JSON type; a reference inside longer text
 * becomes text (strings as they are, other values as compact JSON).
 *
 * With `stackvm`, a reference to a variable that does not exist or a path that
 * does not resolve is left as the text it was written (`${x}`), and strings
 * deeper than `stackvm.levels` are left as they are.
 *
 * @throws StepError `unknown_reference` when a variable or a path does not exist
 *   (not with `stackvm`), `value_too_deep` when `value` nests deeper than {@link MAX_VALUE_DEPTH}.
 * @example
 * const lookup = lookupVariables({ user: { name: "Ada", langs: ["en", "fr"] } });
 * resolveReferences("${user.langs}", lookup)            // ["en", "fr"]
 * resolveReferences("Hi ${user.name} (${user.langs.1})", lookup) // "Hi Ada (fr)"
 * resolveReferences({ note: "costs \\${5}" }, lookup)    // { note: "costs ${5}" }
 * resolveReferences("${nobody} ${user.age}", lookup, { levels: 0 }) // "${nobody} ${user.age}"
 */
export function resolveReferences(
  value: unknown,
  lookup: Lookup,
  stackvm?: StackvmResolution,
): unknown {
  return resolveAt(value, lookup, stackvm, 0);
}

function resolveAt(
  value: unknown,
  lookup: Lookup,
  stackvm: StackvmResolution | undefined,
  depth: number,
): unknown {
  if (stackvm && depth > stackvm.levels) return value;
  if (typeof value === "string") return resolveString(value, lookup, stackvm !== undefined);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_VALUE_DEPTH) {
    throw new StepError(
      "value_too_deep",
      `A parameter nests objects and arrays more than ${MAX_VALUE_DEPTH} levels deep. Flatten it.`,
    );
  }
  if (Array.isArray(value)) {
    return value.map((item) => resolveAt(item, lookup, stackvm, depth + 1));
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays a plain key.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, resolveAt(item, lookup, stackvm, depth + 1)]),
  );
}

function resolveString(text: string, lookup: Lookup, lenient: boolean): unknown {
  const parts = parseTemplate(text);
  if (typeof parts === "string") return parts;
  const value = (part: Omit<Reference, "where">): unknown => {
    if (!lenient) return referencedValue(part, lookup);
    try {
      return referencedValue(part, lookup);
    } catch (error) {
      if (error instanceof StepError && error.code === "unknown_reference") return UNRESOLVED;
      throw error;
    }
  };
  const [first] = parts;
  if (parts.length === 1 && typeof first === "object") {
    const found = value(first);
    return found === UNRESOLVED ? first.text : found;
  }
  return parts
    .map((part) => {
      if (typeof part === "string") return part;
      const found = value(part);
      return found === UNRESOLVED ? part.text : asText(found);
    })
    .join("");
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

function referencedValue(reference: Omit<Reference, "where">, lookup: Lookup): unknown {
  const found = lookup(reference.name);
  if (!found.found) {
    const names = lookup.names ? [...lookup.names()].sort() : undefined;
    const exist =
      names === undefined
        ? ""
        : names.length === 0
          ? " No variables exist yet."
          : ` The variables that exist: ${listNames(names)}.`;
    throw new StepError(
      "unknown_reference",
      `${reference.text} refers to the variable '${reference.name}', which does not exist.${exist} ` +
        "Assign it in an earlier step, or fix the name.",
      { reference: reference.text, name: reference.name, ...(names ? { variables: names } : {}) },
    );
  }
  let current = found.value;
  let walked = reference.name;
  for (const segment of reference.path) {
    current = step(current, segment, walked, reference.text);
    walked += `.${segment}`;
  }
  return current;
}

function step(container: unknown, segment: string, walked: string, text: string): unknown {
  const fail = (why: string): never => {
    throw new StepError("unknown_reference", `${text} does not exist: ${why}. Fix the path.`, {
      reference: text,
      at: walked,
    });
  };
  if (Array.isArray(container)) {
    if (!/^(?:0|[1-9][0-9]*)$/.test(segment)) {
      return fail(`${walked} is an array, so '${segment}' must be an index (0, 1, ...)`);
    }
    const index = Number(segment);
    if (index >= container.length) {
      return fail(`${walked} has ${container.length} item(s), so it has no index ${index}`);
    }
    return container[index];
  }
  if (container !== null && typeof container === "object") {
    if (!Object.hasOwn(container, segment)) {
      const keys = Object.keys(container);
      const has = keys.length === 0 ? "no keys" : `the keys ${listNames(keys)}`;
      return fail(`${walked} has no key '${segment}' (it has ${has})`);
    }
    return (container as Record<string, unknown>)[segment];
  }
  const kind = container === null ? "null" : typeof container;
  return fail(`${walked} is ${kind}, which has no key '${segment}'`);
}

/**
 * Lists every reference in `value`, strings at any depth (object keys are not
 * searched; `\${` escapes are not references). Iterative, so any depth is safe.
 *
 * @example
 * findReferences({ prompt: "Sum ${a} and ${b.total}" })
 * // [{ name: "a", path: [], where: ["prompt"], text: "${a}" },
 * //  { name: "b", path: ["total"], where: ["prompt"], text: "${b.total}" }]
 */
export function findReferences(value: unknown): Reference[] {
  interface Frame {
    value: unknown;
    parent: Frame | null;
    key: string | number | null;
  }
  const whereOf = (frame: Frame): (string | number)[] => {
    const where: (string | number)[] = [];
    for (let f: Frame | null = frame; f !== null && f.key !== null; f = f.parent) where.push(f.key);
    return where.reverse();
  };
  const found: Reference[] = [];
  const stack: Frame[] = [{ value, parent: null, key: null }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const current = frame.value;
    if (typeof current === "string") {
      const parts = parseTemplate(current);
      if (typeof parts === "string") continue;
      for (const part of parts) {
        if (typeof part !== "string") found.push({ ...part, where: whereOf(frame) });
      }
    } else if (Array.isArray(current)) {
      // Pushed in reverse so that references come out in document order.
      for (let i = current.length - 1; i >= 0; i -= 1) {
        stack.push({ value: current[i], parent: frame, key: i });
      }
    } else if (current !== null && typeof current === "object") {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        const [key, item] = entries[i]!;
        stack.push({ value: item, parent: frame, key });
      }
    }
  }
  return found;
}

/**
 * A {@link Lookup} over plain variables, which also names them in errors.
 *
 * @example
 * resolveReferences("${x}", lookupVariables({ x: 1 })) // 1
 */
export function lookupVariables(
  variables: Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>,
): Lookup {
  if (variables instanceof Map) {
    const map = variables as ReadonlyMap<string, unknown>;
    return Object.assign(
      (name: string) =>
        map.has(name) ? { found: true as const, value: map.get(name) } : { found: false as const },
      { names: () => map.keys() },
    );
  }
  const record = variables as Readonly<Record<string, unknown>>;
  return Object.assign(
    (name: string) =>
      Object.hasOwn(record, name)
        ? { found: true as const, value: record[name] }
        : { found: false as const },
    { names: () => Object.keys(record) },
  );
}
