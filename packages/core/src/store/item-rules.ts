/**
 * The rules of the item store that every adapter enforces the same way, so that
 * code that passes its unit tests against `MemoryItemStore` does not fail later
 * against DynamoDB with a cryptic message about `#n3`. They follow DynamoDB's own
 * limits (key types, index keys, 400 KB items, overlapping update paths), and are
 * at times stricter (a value that the document client would silently drop, such
 * as a function, is refused): memory may be stricter than DynamoDB, never looser.
 */
import { MalformedError, StoreRefusedError, TooLargeError } from "../errors";
import { shapeProblem } from "../plan/json-shape";
import type { Changes, Condition, Item, ItemKey, Query } from "../ports/item-store";

/**
 * Rethrows an item store's refusal by these rules (a `TypeError`: a value it
 * cannot hold) as the `StoreRefusedError` the step makes an error commit of
 * (`vm/commit.ts`); anything else as it is. Used where a record's values come
 * from a step (`TaskStore.putCommit`), so that a `TypeError` elsewhere stays a bug.
 */
export function throwAsRefusal(error: unknown): never {
  throw error instanceof TypeError ? new StoreRefusedError(error.message, error) : error;
}

/** DynamoDB's item size limit. */
export const MAX_ITEM_BYTES = 400 * 1024;

/** DynamoDB's nesting limit: an attribute holds at most 32 levels of maps and lists. */
export const MAX_ATTRIBUTE_DEPTH = 32;

/**
 * The one key the store refuses: a copy that assigns it sets the prototype, and
 * the DynamoDB marshaller fails on it ("Unsupported type passed"). Callers refuse
 * it with a clear answer first (`plan/json-shape.ts`); this is the backstop.
 */
const PROTO_KEY: ReadonlySet<string> = new Set(["__proto__"]);

/** Throws unless the value nests at most `levels` deep and has no `__proto__` key. */
function checkShape(value: unknown, where: string, levels: number): void {
  const problem = shapeProblem(value, where, levels, PROTO_KEY);
  if (problem) throw new TypeError(problem.message);
}

/** The table's key attributes: never updated, always non-empty strings. */
export const TABLE_KEYS = ["pk", "sk"] as const;
/** The gsi1 index's key attributes: absent (not in the index) or non-empty strings. */
export const INDEX_KEYS = ["gsi1pk", "gsi1sk"] as const;

/** Throws unless pk and sk are non-empty strings. */
export function checkKey(key: ItemKey): void {
  for (const name of TABLE_KEYS) {
    const value = (key as unknown as Record<string, unknown>)[name];
    if (typeof value !== "string" || value.length === 0) {
      throw new TypeError(
        `item key attribute '${name}' must be a non-empty string, got ${describe(value)}`,
      );
    }
  }
}

/**
 * Throws unless the item can be stored as is: string keys, string index keys
 * (or none), non-empty attribute names, JSON-compatible values, at most 400 KB.
 */
export function checkItem(item: Item): void {
  checkKey(item);
  for (const name of INDEX_KEYS) {
    const value = item[name];
    if (value !== undefined && (typeof value !== "string" || value.length === 0)) {
      throw new TypeError(
        `index key attribute '${name}' must be a non-empty string or absent (the item is then not in gsi1), got ${describe(value)}`,
      );
    }
  }
  for (const [name, value] of Object.entries(item)) {
    if (name.length === 0) throw new TypeError("attribute names must not be empty");
    if (PROTO_KEY.has(name)) throw new TypeError("'__proto__' cannot be an attribute name");
    checkShape(value, `attribute '${name}'`, MAX_ATTRIBUTE_DEPTH);
  }
  const size = itemSize(item);
  if (size > MAX_ITEM_BYTES) {
    // The message reaches API clients: it names sizes, not internal keys.
    throw new TooLargeError(
      `a record would be ${size} bytes, over the store's limit of ${MAX_ITEM_BYTES} bytes`,
    );
  }
}

/** Throws unless the condition is one the adapters can express. */
export function checkCondition(condition: Condition | undefined): void {
  if (condition === undefined) return;
  if (condition.orExpiredBefore !== undefined && condition.exists !== false) {
    throw new TypeError("condition 'orExpiredBefore' only applies with 'exists: false'");
  }
  for (const [name, bound] of Object.entries(condition.below ?? {})) {
    if (typeof bound !== "number" || !Number.isFinite(bound)) {
      throw new TypeError(`condition 'below.${name}' must be a finite number`);
    }
  }
  for (const name of [
    ...Object.keys(condition.equals ?? {}),
    ...Object.keys(condition.below ?? {}),
  ]) {
    if (name.length === 0) throw new TypeError("condition attribute names must not be empty");
  }
  checkScalars("condition 'equals'", condition.equals);
}

/**
 * Equality tests take strings, numbers, booleans or null: dynalite never finds
 * a map or a list equal (DynamoDB does), so such a test would pass in one place
 * and fail in another.
 */
function checkScalars(where: string, values: Record<string, unknown> | undefined): void {
  for (const [name, value] of Object.entries(values ?? {})) {
    const ok =
      value === null ||
      typeof value === "string" ||
      typeof value === "boolean" ||
      (typeof value === "number" && Number.isFinite(value));
    if (!ok) {
      throw new TypeError(
        `${where} on '${name}' takes a string, a finite number, a boolean or null; compare a map or a list through one of its scalar attributes`,
      );
    }
  }
}

/**
 * Throws unless the changes are valid for DynamoDB: non-empty paths, no key
 * attribute, finite increments, and no two paths that overlap (the same path
 * twice, or a path and one inside it), which DynamoDB refuses.
 */
export function checkChanges(changes: Changes): void {
  const paths: string[][] = [
    ...(changes.set ?? []).map(([path]) => path),
    ...(changes.add ?? []).map(([path]) => path),
    ...(changes.remove ?? []),
  ];
  for (const path of paths) {
    if (!Array.isArray(path) || path.length === 0 || path.some((part) => part === "")) {
      throw new TypeError(
        `update path ${JSON.stringify(path)} must be a non-empty list of non-empty attribute names`,
      );
    }
    const top = path[0];
    if (top === "pk" || top === "sk") {
      throw new TypeError(`update of '${top}': key attributes cannot change; put a new item`);
    }
    if (path.some((part) => PROTO_KEY.has(part))) {
      throw new TypeError(`update path ${JSON.stringify(path)}: '__proto__' cannot be a name`);
    }
  }
  for (const [path, value] of changes.set ?? []) {
    checkShape(value, `update of ${path.join(".")}`, MAX_ATTRIBUTE_DEPTH - path.length + 1);
  }
  for (const [path, by] of changes.add ?? []) {
    if (typeof by !== "number" || !Number.isFinite(by)) {
      throw new TypeError(`add to ${JSON.stringify(path)}: the increment must be a finite number`);
    }
  }
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      const a = paths[i]!;
      const b = paths[j]!;
      const shorter = a.length <= b.length ? a : b;
      const longer = shorter === a ? b : a;
      if (shorter.every((part, k) => part === longer[k])) {
        throw new TypeError(
          `update paths ${JSON.stringify(a)} and ${JSON.stringify(b)} overlap: change each attribute once per update`,
        );
      }
    }
  }
}

/** Throws unless the query is well formed (bounds in order, a positive limit, a filter on non-key attributes). */
export function checkQuery(query: Query): void {
  if (typeof query.pk !== "string" || query.pk.length === 0) {
    throw new TypeError("query 'pk' must be a non-empty string");
  }
  if (query.limit !== undefined && (!Number.isInteger(query.limit) || query.limit < 1)) {
    throw new TypeError(`query 'limit' must be a positive integer, got ${describe(query.limit)}`);
  }
  if (query.between !== undefined) {
    const [low, high] = query.between;
    if (typeof low !== "string" || typeof high !== "string" || low === "" || high === "") {
      throw new TypeError("query 'between' takes two non-empty strings");
    }
    if (compareUtf8(low, high) > 0) {
      throw new TypeError(
        `query 'between' bounds are reversed: '${low}' sorts after '${high}'; put the lower bound first`,
      );
    }
  }
  checkScalars("query 'filter'", query.filter);
  const keys = query.index === "gsi1" ? INDEX_KEYS : TABLE_KEYS;
  for (const name of Object.keys(query.filter ?? {})) {
    if ((keys as readonly string[]).includes(name)) {
      throw new TypeError(
        `query 'filter' cannot test the key attribute '${name}': use 'pk', 'prefix' or 'between'`,
      );
    }
  }
}

/** The key attributes that locate an item in a query's order (the cursor's content). */
export function positionOf(item: Item, index: Query["index"]): Record<string, string> {
  const position: Record<string, string> = { pk: item.pk, sk: item.sk };
  if (index === "gsi1") {
    position.gsi1pk = String(item.gsi1pk);
    position.gsi1sk = String(item.gsi1sk);
  }
  return position;
}

/** Encodes a position as an opaque, URL-safe cursor. */
export function encodeCursor(position: Record<string, string>): string {
  return Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
}

/**
 * Decodes a cursor of `query`, refusing one that is not ours or that belongs to
 * another partition (cursors reach the API from clients, hence `MalformedError`).
 */
export function decodeCursor(cursor: string, query: Query): Record<string, string> {
  const names = query.index === "gsi1" ? ["pk", "sk", "gsi1pk", "gsi1sk"] : ["pk", "sk"];
  const partitionKey = query.index === "gsi1" ? "gsi1pk" : "pk";
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    position = undefined;
  }
  const record = position as Record<string, unknown> | undefined;
  const valid =
    typeof record === "object" &&
    record !== null &&
    Object.keys(record).length === names.length &&
    names.every((name) => typeof record[name] === "string") &&
    record[partitionKey] === query.pk;
  if (!valid) {
    throw new MalformedError(
      "invalid cursor: pass back the cursor of the previous page of the same listing, unchanged",
    );
  }
  return record as Record<string, string>;
}

/**
 * Compares strings as DynamoDB orders sort keys: by UTF-8 bytes, which is code
 * point order. JavaScript's `<` compares UTF-16 units and disagrees for
 * characters above U+FFFF against those in U+E000..U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate && !ySurrogate && y >= 0xe000) return 1;
    if (ySurrogate && !xSurrogate && x >= 0xe000) return -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Deep equality of stored values, as DynamoDB's `=` sees them (map key order does not matter). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((value, i) => sameValue(value, b[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  const otherKeys = Object.keys(y).filter((k) => y[k] !== undefined);
  return keys.length === otherKeys.length && keys.every((k) => k in y && sameValue(x[k], y[k]));
}

/**
 * A deep copy of a JSON-compatible value, dropping `undefined` as the DynamoDB
 * adapter does (`removeUndefinedValues`), and refusing what DynamoDB cannot
 * store or give back exactly: non-finite or unsafe numbers, class instances
 * (Date, Map, Uint8Array...), functions.
 */
export function copyValue<T>(value: T, path = "value"): T {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    const size = Math.abs(value);
    if (!Number.isFinite(value) || size > Number.MAX_SAFE_INTEGER || (size > 0 && size < 1e-130)) {
      throw new TypeError(
        `${path}: the number ${value} cannot be stored exactly (finite, at most 2^53 - 1 in size, besides 0 at least 1e-130); store it as a string`,
      );
    }
    return value;
  }
  if (Array.isArray(value)) {
    return value
      .filter((element) => element !== undefined)
      .map((element, i) => copyValue(element, `${path}[${i}]`)) as T;
  }
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      const copy: Record<string, unknown> = {};
      for (const [key, element] of Object.entries(value)) {
        if (element !== undefined) copy[key] = copyValue(element, `${path}.${key}`);
      }
      return copy as T;
    }
  }
  throw new TypeError(
    `${path}: ${describe(value)} is not JSON-compatible; store plain objects, arrays, strings, finite numbers, booleans or null`,
  );
}

/** The size of an item as DynamoDB counts it (names and values in UTF-8, numbers about half their digits). */
export function itemSize(item: Record<string, unknown>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value !== undefined) size += Buffer.byteLength(name, "utf8") + valueSize(value);
  }
  return size;
}

function valueSize(value: unknown): number {
  if (typeof value === "string") return Buffer.byteLength(value, "utf8");
  if (typeof value === "number") return Math.ceil(String(Math.abs(value)).length / 2) + 1;
  if (value === null || typeof value === "boolean") return 1;
  if (Array.isArray(value)) {
    return 3 + value.reduce((sum: number, element) => sum + 1 + valueSize(element), 0);
  }
  if (typeof value === "object") return 3 + itemSize(value as Record<string, unknown>);
  return 0;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (typeof value === "object") return `an instance of ${value.constructor?.name ?? "Object"}`;
  if (typeof value === "string") return `'${value}'`;
  return `${typeof value} ${String(value)}`;
}

/**
 * The item after an update answered with only what changed (`returns: "updated"`):
 * `before`, the item as the caller read it (left unchanged), with each path that
 * `set` or `add` named taken from `answer` and each removed path deleted. The
 * attributes the changes did not name keep their value from `before`, so a write
 * by someone else to them between the read and the update is not seen here (the
 * next read sees it). A whole item is a valid `answer` too.
 */
export function mergeUpdated<T extends Item>(before: T, changes: Changes, answer: Item): T {
  const merged: Record<string, unknown> = { ...before };
  const copied = new Set<Record<string, unknown>>([merged]);
  /** The map holding the last part of `path` in `merged`, copied on the way; null if missing. */
  const parentOf = (path: string[]): Record<string, unknown> | null => {
    let node = merged;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      if (typeof next !== "object" || next === null || Array.isArray(next)) return null;
      let child = next as Record<string, unknown>;
      if (!copied.has(child)) {
        child = { ...child };
        copied.add(child);
        node[part] = child;
      }
      node = child;
    }
    return node;
  };
  const named = [...(changes.set ?? []), ...(changes.add ?? [])].map(([path]) => path);
  for (const path of named) {
    let value: unknown = answer;
    for (const part of path) {
      value =
        typeof value === "object" && value !== null && !Array.isArray(value)
          ? (value as Record<string, unknown>)[part]
          : undefined;
    }
    const parent = parentOf(path);
    if (parent === null) {
      // The parent was not a map before the update: the answer's whole attribute.
      merged[path[0]!] = answer[path[0]!];
    } else if (value === undefined) {
      delete parent[path.at(-1)!];
    } else {
      parent[path.at(-1)!] = value;
    }
  }
  for (const path of changes.remove ?? []) {
    const parent = parentOf(path);
    if (parent !== null) delete parent[path.at(-1)!];
  }
  return merged as T;
}
