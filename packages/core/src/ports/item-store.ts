/**
 * The storage port: a small key-value store with conditional writes, shaped after
 * DynamoDB's single-table model so that the DynamoDB adapter is a thin translation.
 * Every record of the system (tasks, branches, commits, keys, namespaces, ...) is an
 * item addressed by a partition key `pk` and a sort key `sk`; repositories in
 * `../store` own the key layout. Every tenant-owned key starts with `T#{tenant}`.
 */

/** The address of one item. */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** An item: its key plus any JSON-compatible attributes. */
export type Item = ItemKey & { [attribute: string]: unknown };

/**
 * A condition on the item as it is before a write. All given parts must hold.
 * - `exists: false`: no item has this key (or, with `orExpiredBefore`, the item's
 *   `ttl` attribute, in epoch seconds, is below that number).
 * - `exists: true`: an item has this key.
 * - `equals`: each top-level attribute equals the value (`null` means absent or null).
 *   Values are strings, numbers, booleans or null (the emulator cannot compare maps).
 * - `below`: each numeric top-level attribute is absent or strictly below the number.
 */
export interface Condition {
  exists?: boolean;
  orExpiredBefore?: number;
  equals?: Record<string, unknown>;
  below?: Record<string, number>;
}

/**
 * Changes of an update. `set` paths are attribute names, or nested paths into maps
 * (`["vars", "x"]`); the parent map of a nested path must exist. `add` increments a
 * numeric attribute (a path too), starting from 0. `remove` deletes attributes.
 */
export interface Changes {
  set?: Array<[path: string[], value: unknown]>;
  add?: Array<[path: string[], by: number]>;
  remove?: string[][];
}

/** What `get` reads of the item. */
export interface GetOptions {
  /**
   * Only these top-level attributes (and the key); the others are not read back
   * (DynamoDB's `ProjectionExpression`: it bills the whole item all the same, but
   * nothing else is sent or decoded).
   */
  attributes?: readonly string[];
}

/** What `update` answers with. */
export interface UpdateOptions {
  /**
   * - `"all"` (the default): the whole item after the update.
   * - `"updated"`: the key and the top-level attributes that `set` or `add` named,
   *   as they are after the update (DynamoDB's `UPDATED_NEW`: DynamoDB answers a
   *   nested path's whole top-level attribute, dynalite and memory only the path's
   *   own entries); removed attributes are absent. `mergeUpdated` applies it to
   *   the item as read before: the caller that has it saves the transfer and
   *   decoding of the rest (a branch's plan and variables, on every step).
   */
  returns?: "all" | "updated";
}

/** A query over one partition (or one partition of the `gsi1` index). */
export interface Query {
  pk: string;
  /** Query the `gsi1` index (`gsi1pk`/`gsi1sk`) instead of the table. */
  index?: "gsi1";
  /** Keep sort keys starting with this prefix. */
  prefix?: string;
  /** Keep sort keys between these bounds, inclusive (with or instead of `prefix`). */
  between?: [string, string];
  /** Newest (largest sort key) first. */
  descending?: boolean;
  /** The most items to return, counted after `filter`. */
  limit?: number;
  /** Opaque cursor from a previous answer. */
  cursor?: string | null;
  /** Keep only items whose top-level attributes equal these values (scalars; `null` means absent or null). */
  filter?: Record<string, unknown>;
}

/** A page of a query. */
export interface QueryPage {
  items: Item[];
  /**
   * Pass back as `cursor` to read on; null at the end. As with DynamoDB, a page
   * that reached `limit` may carry a cursor to an empty page.
   */
  cursor: string | null;
}

/**
 * The storage port. Adapters: `MemoryItemStore` (core), `DynamoItemStore` (aws).
 * A failed condition rejects with `ConflictError`; adapters rethrow what they do
 * not understand.
 */
export interface ItemStore {
  get(key: ItemKey, options?: GetOptions): Promise<Item | null>;
  /** Reads up to 100 items in one call; missing items are left out; order is not kept. */
  batchGet(keys: ItemKey[]): Promise<Item[]>;
  put(item: Item, condition?: Condition): Promise<void>;
  /**
   * Applies the changes (creating the item if absent, unless a condition says so) and
   * returns the new item, or only what changed (`UpdateOptions`).
   */
  update(
    key: ItemKey,
    changes: Changes,
    condition?: Condition,
    options?: UpdateOptions,
  ): Promise<Item>;
  delete(key: ItemKey, condition?: Condition): Promise<void>;
  /** Deletes many items, unconditionally, in as few calls as the backend allows. */
  deleteMany(keys: ItemKey[]): Promise<void>;
  query(query: Query): Promise<QueryPage>;
}
