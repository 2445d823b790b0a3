/**
 * The bounds of a JSON Schema that a tenant or a tool server supplies, checked
 * before it is compiled. Checking a value costs about the schema's size with
 * every `$ref` written out in place, times the value's size: a chain of `anyOf`s
 * whose branches point at the next level doubles at each level (19 levels took
 * 1.7 s per call), and a `$ref` that leads back to itself never ends (`{"$ref":
 * "#"}` overflowed the stack on every call). So a schema is refused when it is
 * too large as written, nested too deep, points outside itself, or written out
 * would pass {@link MAX_EXPANDED_NODES} nodes (a cycle counts as infinite).
 */

/** The largest schema, as JSON (64 KiB). */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** The deepest nesting of objects and arrays in a schema, each `$ref` written out in place. */
export const MAX_SCHEMA_DEPTH = 64;
/** The most schema nodes once every `$ref` is written out in place. */
export const MAX_EXPANDED_NODES = 2000;

/** Keywords whose values are data, not schemas: a `$ref` inside them is not a reference. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples", "description", "title"]);
/** References this service cannot follow safely: to other documents, or dynamic scopes. */
const UNSUPPORTED_REFS = ["$dynamicRef", "$recursiveRef"];

type Node = Record<string, unknown> | unknown[];

/**
 * Says what is wrong with a schema's size or references, or null when it is
 * within bounds.
 *
 * @example
 * schemaBoundsProblem({ type: "object", $ref: "#" }) // "the schema's $ref at # leads back to itself …"
 */
export function schemaBoundsProblem(schema: unknown): string | null {
  const json = JSON.stringify(schema);
  if (json === undefined) return "the schema is not JSON";
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_SCHEMA_BYTES) {
    return `the schema is ${bytes} bytes of JSON; at most ${MAX_SCHEMA_BYTES}: describe the input more briefly`;
  }
  return new Expander(schema).problem();
}

class Expander {
  readonly #root: unknown;
  readonly #sizes = new Map<object, number>();
  readonly #open = new Set<object>();

  constructor(root: unknown) {
    this.#root = root;
  }

  problem(): string | null {
    try {
      const size = this.#size(this.#root, "#", 0);
      if (size > MAX_EXPANDED_NODES) return this.#tooLarge();
      return null;
    } catch (error) {
      if (error instanceof BoundsError) return error.message;
      throw error;
    }
  }

  #tooLarge(): string {
    return `the schema has more than ${MAX_EXPANDED_NODES} nodes once each $ref is written out in place (a chain of anyOf or $ref that doubles at each level); simplify it`;
  }

  /** The node's size with every reference written out; memoized, so linear in the schema. */
  #size(node: unknown, at: string, depth: number): number {
    if (node === null || typeof node !== "object") return 1;
    if (depth > MAX_SCHEMA_DEPTH) {
      throw new BoundsError(
        `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels (each $ref written out in place) at ${shorten(at)}; flatten it`,
      );
    }
    const known = this.#sizes.get(node);
    if (known !== undefined) return known;
    if (this.#open.has(node)) {
      throw new BoundsError(
        `the schema's $ref at ${shorten(at)} leads back to itself (a reference cycle); a schema here must not be recursive`,
      );
    }
    this.#open.add(node);
    let size = 1;
    const entries: [string, unknown][] = Array.isArray(node)
      ? node.map((value, index) => [String(index), value])
      : Object.entries(node);
    for (const [key, value] of entries) {
      if (!Array.isArray(node) && DATA_KEYWORDS.has(key)) continue;
      if (!Array.isArray(node) && UNSUPPORTED_REFS.includes(key)) {
        throw new BoundsError(
          `the schema uses ${key} at ${shorten(at)}; use $ref to a #/… pointer instead`,
        );
      }
      if (!Array.isArray(node) && key === "$id" && node !== this.#root) {
        throw new BoundsError(`the schema sets $id below its root, at ${shorten(at)}; remove it`);
      }
      if (!Array.isArray(node) && key === "$ref") {
        size += this.#size(this.#resolve(value, at), `${at}/$ref`, depth + 1);
      } else {
        size += this.#size(value, `${at}/${key}`, depth + 1);
      }
      if (size > MAX_EXPANDED_NODES) throw new BoundsError(this.#tooLarge());
    }
    this.#open.delete(node);
    this.#sizes.set(node as Node, size);
    return size;
  }

  #resolve(ref: unknown, at: string): unknown {
    if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/"))) {
      throw new BoundsError(
        `the $ref at ${shorten(at)} is ${JSON.stringify(ref)}; only references inside the schema ("#/$defs/…") are followed`,
      );
    }
    let target: unknown = this.#root;
    for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
      const key = unescapePointer(raw);
      if (target === null || typeof target !== "object" || !Object.hasOwn(target, key)) {
        throw new BoundsError(
          `the $ref ${JSON.stringify(ref)} at ${shorten(at)} points at nothing in the schema`,
        );
      }
      target = (target as Record<string, unknown>)[key];
    }
    return target;
  }
}

class BoundsError extends Error {}

function unescapePointer(raw: string): string {
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Not percent-encoded after all: the key is read as written.
  }
  return decoded.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** A JSON pointer for a message: its start and end when it is long. */
function shorten(at: string): string {
  return at.length <= 120 ? at : `${at.slice(0, 50)}…${at.slice(-60)}`;
}
