/**
 * The item store in memory, with DynamoDB's semantics: conditions, nested `set`
 * paths whose parent map must exist, `add`, `remove`, queries on the table and
 * on the sparse `gsi1` index, UTF-8 sort order, cursors, and the same limits
 * (`item-rules.ts`). Every read and write copies, so a caller cannot change the
 * stored state by mutating an object it passed in or got back.
 */
import { ConflictError } from "../../errors";
import type {
  Changes,
  Condition,
  GetOptions,
  Item,
  ItemKey,
  ItemStore,
  Query,
  QueryPage,
  UpdateOptions,
} from "../../ports/item-store";
import {
  checkChanges,
  checkCondition,
  checkItem,
  checkKey,
  checkQuery,
  compareUtf8,
  copyValue,
  decodeCursor,
  encodeCursor,
  positionOf,
  sameValue,
} from "../../store/item-rules";

/**
 * An `ItemStore` held in a Map, for unit tests and the conformance suite.
 *
 * @example
 * const store = new MemoryItemStore();
 * await store.put({ pk: "T#t1", sk: "TASK", status: "queued" }, { exists: false });
 * await store.update({ pk: "T#t1", sk: "TASK" }, { set: [[["status"], "running"]] }, { equals: { status: "queued" } });
 */
export class MemoryItemStore implements ItemStore {
  readonly #items = new Map<string, Item>();

  async get(key: ItemKey, options: GetOptions = {}): Promise<Item | null> {
    checkKey(key);
    const item = this.#items.get(address(key));
    if (item === undefined) return null;
    if (options.attributes === undefined) return copyValue(item);
    const picked: Item = { pk: item.pk, sk: item.sk };
    for (const name of options.attributes) {
      if (item[name] !== undefined) picked[name] = copyValue(item[name]);
    }
    return picked;
  }

  async batchGet(keys: ItemKey[]): Promise<Item[]> {
    const found = new Map<string, Item>();
    for (const key of keys) {
      checkKey(key);
      const item = this.#items.get(address(key));
      if (item !== undefined) found.set(address(key), copyValue(item));
    }
    return [...found.values()];
  }

  async put(item: Item, condition?: Condition): Promise<void> {
    checkCondition(condition);
    // Checked before the copy: the check bounds the depth that the copy recurses into.
    checkItem(item);
    const copy = copyValue(item, "item");
    this.#check(copy, condition);
    this.#items.set(address(copy), copy);
  }

  async update(
    key: ItemKey,
    changes: Changes,
    condition?: Condition,
    options: UpdateOptions = {},
  ): Promise<Item> {
    checkKey(key);
    checkCondition(condition);
    checkChanges(changes);
    this.#check(key, condition);
    const before = this.#items.get(address(key));
    const next: Item = before === undefined ? { pk: key.pk, sk: key.sk } : copyValue(before);
    for (const [path, value] of changes.set ?? []) {
      if (value === undefined) removePath(next, path, key);
      else parentOf(next, path, key)[path.at(-1)!] = copyValue(value, path.join("."));
    }
    for (const [path, by] of changes.add ?? []) {
      const parent = parentOf(next, path, key);
      const name = path.at(-1)!;
      const current = parent[name] ?? 0;
      if (typeof current !== "number") {
        throw new TypeError(
          `add to ${JSON.stringify(path)} of ${key.pk} / ${key.sk}: the attribute holds ${typeof current}, not a number`,
        );
      }
      parent[name] = copyValue(current + by, path.join("."));
    }
    for (const path of changes.remove ?? []) removePath(next, path, key);
    checkItem(next);
    this.#items.set(address(key), next);
    return options.returns === "updated" ? updatedOf(next, changes) : copyValue(next);
  }

  async delete(key: ItemKey, condition?: Condition): Promise<void> {
    checkKey(key);
    checkCondition(condition);
    this.#check(key, condition);
    this.#items.delete(address(key));
  }

  async deleteMany(keys: ItemKey[]): Promise<void> {
    for (const key of keys) checkKey(key);
    for (const key of keys) this.#items.delete(address(key));
  }

  async query(query: Query): Promise<QueryPage> {
    checkQuery(query);
    const gsi = query.index === "gsi1";
    const sortKey = (item: Item) => (gsi ? (item.gsi1sk as string) : item.sk);
    const start = query.cursor ? decodeCursor(query.cursor, query) : undefined;
    const direction = query.descending ? -1 : 1;
    const prefix = query.prefix ?? "";
    const matches = [...this.#items.values()]
      .filter((item) => (gsi ? inIndex(item) && item.gsi1pk === query.pk : item.pk === query.pk))
      .filter((item) => sortKey(item).startsWith(prefix))
      .filter((item) => {
        if (query.between === undefined) return true;
        const sk = sortKey(item);
        return compareUtf8(sk, query.between[0]) >= 0 && compareUtf8(sk, query.between[1]) <= 0;
      })
      .sort((a, b) => direction * order(a, b, gsi))
      .filter((item) => start === undefined || direction * order(item, start, gsi) > 0);

    // `limit` counts the items returned (after the filter); a page that reaches it
    // has a cursor even when nothing follows, as a DynamoDB page does.
    const filter = Object.entries(query.filter ?? {});
    const kept = matches.filter((item) =>
      filter.every(([name, value]) =>
        value === null
          ? item[name] === undefined || item[name] === null
          : sameValue(item[name], value),
      ),
    );
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    const items = kept.slice(0, limit);
    const last = items.at(-1);
    return {
      items: items.map((item) => copyValue(item)),
      cursor:
        items.length === limit && last !== undefined
          ? encodeCursor(positionOf(last, query.index))
          : null,
    };
  }

  /** Every stored item (copies), for assertions in tests. */
  dump(): Item[] {
    return [...this.#items.values()].map((item) => copyValue(item));
  }

  #check(key: ItemKey, condition: Condition | undefined): void {
    if (condition === undefined) return;
    const item = this.#items.get(address(key));
    if (!holds(item, condition)) {
      throw new ConflictError(
        `the condition on item ${key.pk} / ${key.sk} does not hold: ${JSON.stringify(condition)}`,
        "condition_failed",
      );
    }
  }
}

/** Evaluates a condition as DynamoDB would evaluate its ConditionExpression. */
function holds(item: Item | undefined, condition: Condition): boolean {
  if (condition.exists === true && item === undefined) return false;
  if (condition.exists === false && item !== undefined) {
    const expired =
      condition.orExpiredBefore !== undefined &&
      typeof item.ttl === "number" &&
      item.ttl < condition.orExpiredBefore;
    if (!expired) return false;
  }
  for (const [name, value] of Object.entries(condition.equals ?? {})) {
    const current = item?.[name];
    const ok =
      value === null
        ? current === undefined || current === null
        : current !== undefined && sameValue(current, value);
    if (!ok) return false;
  }
  for (const [name, bound] of Object.entries(condition.below ?? {})) {
    const current = item?.[name];
    if (current !== undefined && !(typeof current === "number" && current < bound)) return false;
  }
  return true;
}

/** The map that holds the last part of `path`; DynamoDB refuses a path through a missing map. */
function parentOf(item: Item, path: string[], key: ItemKey): Record<string, unknown> {
  let node: Record<string, unknown> = item;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      throw new TypeError(
        `update of ${key.pk} / ${key.sk}: the path ${JSON.stringify(path)} goes through '${part}', which is not a map; set the parent map first`,
      );
    }
    node = next as Record<string, unknown>;
  }
  return node;
}

/** The key and the paths that `set` or `add` named, as DynamoDB's `UPDATED_NEW` answers. */
function updatedOf(item: Item, changes: Changes): Item {
  const answer: Item = { pk: item.pk, sk: item.sk };
  const named = [...(changes.set ?? []), ...(changes.add ?? [])].map(([path]) => path);
  for (const path of named) {
    let value: unknown = item;
    for (const part of path) value = (value as Record<string, unknown> | undefined)?.[part];
    if (value === undefined) continue;
    let to: Record<string, unknown> = answer;
    for (const part of path.slice(0, -1)) {
      to[part] ??= {};
      to = to[part] as Record<string, unknown>;
    }
    to[path.at(-1)!] = copyValue(value);
  }
  return answer;
}

function removePath(item: Item, path: string[], key: ItemKey): void {
  delete parentOf(item, path, key)[path.at(-1)!];
}

function inIndex(item: Item): boolean {
  return typeof item.gsi1pk === "string" && typeof item.gsi1sk === "string";
}

/** Table order by sort key; index order by gsi1sk, then the table key (DynamoDB leaves ties unspecified). */
function order(a: Record<string, unknown>, b: Record<string, unknown>, gsi: boolean): number {
  if (gsi) {
    const bySort = compareUtf8(a.gsi1sk as string, b.gsi1sk as string);
    if (bySort !== 0) return bySort;
    const byPartition = compareUtf8(a.pk as string, b.pk as string);
    if (byPartition !== 0) return byPartition;
  }
  return compareUtf8(a.sk as string, b.sk as string);
}

function address(key: ItemKey): string {
  return JSON.stringify([key.pk, key.sk]);
}
