/**
 * The item store on DynamoDB: a thin translation of the port into the document
 * client's commands, with every name and value behind placeholders, failed
 * conditions as `ConflictError`, batches chunked to DynamoDB's limits with their
 * unprocessed remainders retried, and opaque cursors.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  type Changes,
  type Condition,
  ConflictError,
  checkChanges,
  checkCondition,
  checkItem,
  checkKey,
  checkQuery,
  decodeCursor,
  encodeCursor,
  type GetOptions,
  type Item,
  type ItemKey,
  type ItemStore,
  positionOf,
  type Query,
  type QueryPage,
  RetryableError,
  TooLargeError,
  type UpdateOptions,
} from "@stackvm/core";
import {
  conditionExpression,
  ExpressionBuilder,
  equalityTerms,
  updateExpression,
} from "./dynamo-expressions";

/** DynamoDB's ceilings for one BatchGetItem and one BatchWriteItem. */
const BATCH_GET_SIZE = 100;
const BATCH_WRITE_SIZE = 25;

export interface DynamoItemStoreOptions {
  /** Rounds of retry for unprocessed batch keys before giving up (default 8). */
  batchAttempts?: number;
  /** First backoff delay in ms between those rounds, doubled each round (default 50). */
  batchBackoffMs?: number;
}

/**
 * `ItemStore` on one DynamoDB table (`table-definition.ts`). Reads of the table
 * are strongly consistent, so that a step reads the head its predecessor wrote;
 * the gsi1 index cannot be (DynamoDB does not offer it).
 *
 * @example
 * const { doc } = createAwsClients({ region: "eu-west-1" });
 * const store = new DynamoItemStore(doc, Resource.Table.name);
 */
export class DynamoItemStore implements ItemStore {
  readonly #attempts: number;
  readonly #backoffMs: number;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: DynamoItemStoreOptions = {},
  ) {
    this.#attempts = options.batchAttempts ?? 8;
    this.#backoffMs = options.batchBackoffMs ?? 50;
  }

  async get(key: ItemKey, options: GetOptions = {}): Promise<Item | null> {
    checkKey(key);
    let projection:
      | { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> }
      | undefined;
    if (options.attributes !== undefined) {
      const b = new ExpressionBuilder();
      const names = ["pk", "sk", ...options.attributes].map((name) => b.name(name));
      projection = { ProjectionExpression: names.join(", "), ExpressionAttributeNames: b.names };
    }
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keyOf(key),
        ConsistentRead: true,
        ...projection,
      }),
    );
    return (out.Item as Item | undefined) ?? null;
  }

  /**
   * The whole items of a page of the keys-only index, in the index's order. An item
   * that left the index (or the table) between the two reads is dropped, as a later
   * query would not see it either.
   */
  async #itemsOf(keys: Item[], indexPk: string): Promise<Item[]> {
    if (keys.length === 0) return [];
    const found = await this.batchGet(keys.map((k) => ({ pk: k.pk, sk: k.sk })));
    const byKey = new Map(found.map((item) => [`${item.pk}\u0000${item.sk}`, item]));
    return keys.flatMap((k) => {
      const item = byKey.get(`${k.pk}\u0000${k.sk}`);
      return item && item.gsi1pk === indexPk ? [item] : [];
    });
  }

  async batchGet(keys: ItemKey[]): Promise<Item[]> {
    for (const key of keys) checkKey(key);
    const pages = await Promise.all(
      chunks(unique(keys), BATCH_GET_SIZE).map((chunk) => this.#batchGetChunk(chunk)),
    );
    return pages.flat();
  }

  async put(item: Item, condition?: Condition): Promise<void> {
    checkCondition(condition);
    checkItem(item);
    const b = new ExpressionBuilder();
    const expression = conditionExpression(b, condition);
    await this.#write(item, () =>
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: expression,
          ...b.attributes(),
        }),
      ),
    );
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
    const b = new ExpressionBuilder();
    const update = updateExpression(b, changes);
    const expression = conditionExpression(b, condition);
    const out = await this.#write(key, () =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf(key),
          UpdateExpression: update,
          ConditionExpression: expression,
          ReturnValues: options.returns === "updated" ? "UPDATED_NEW" : "ALL_NEW",
          ...b.attributes(),
        }),
      ),
    );
    return options.returns === "updated"
      ? ({ ...out.Attributes, pk: key.pk, sk: key.sk } as Item)
      : (out.Attributes as Item);
  }

  async delete(key: ItemKey, condition?: Condition): Promise<void> {
    checkKey(key);
    checkCondition(condition);
    const b = new ExpressionBuilder();
    const expression = conditionExpression(b, condition);
    await this.#write(key, () =>
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keyOf(key),
          ConditionExpression: expression,
          ...b.attributes(),
        }),
      ),
    );
  }

  async deleteMany(keys: ItemKey[]): Promise<void> {
    for (const key of keys) checkKey(key);
    await Promise.all(
      chunks(unique(keys), BATCH_WRITE_SIZE).map((chunk) => this.#batchDeleteChunk(chunk)),
    );
  }

  async query(query: Query): Promise<QueryPage> {
    checkQuery(query);
    const gsi = query.index === "gsi1";
    const sortName = gsi ? "gsi1sk" : "sk";
    const b = new ExpressionBuilder();
    let keyCondition = `${b.name(gsi ? "gsi1pk" : "pk")} = ${b.value(query.pk)}`;
    const prefix = query.prefix === "" ? undefined : query.prefix;
    // A key condition takes one test of the sort key: with both, BETWEEN goes to
    // DynamoDB and the prefix is checked here (a FilterExpression cannot test keys).
    let prefixHere: string | undefined;
    if (query.between !== undefined) {
      const [low, high] = query.between;
      keyCondition += ` AND ${b.name(sortName)} BETWEEN ${b.value(low)} AND ${b.value(high)}`;
      prefixHere = prefix;
    } else if (prefix !== undefined) {
      keyCondition += ` AND begins_with(${b.name(sortName)}, ${b.value(prefix)})`;
    }
    // The index projects keys only: its filter is applied here, on the items read back.
    const filterTerms = gsi ? [] : equalityTerms(b, query.filter ?? {});
    const filterHere = gsi && query.filter !== undefined ? query.filter : undefined;
    const filtered = filterTerms.length > 0 || prefixHere !== undefined || filterHere !== undefined;
    const limit = query.limit ?? Number.POSITIVE_INFINITY;

    const items: Item[] = [];
    let start: Record<string, string> | undefined = query.cursor
      ? decodeCursor(query.cursor, query)
      : undefined;
    for (;;) {
      const remaining = limit - items.length;
      // Without a filter, ask for exactly what is missing; with one, read ahead a
      // little so that a sparse filter does not cost one call per item.
      const pageLimit = Number.isFinite(remaining)
        ? filtered
          ? Math.max(remaining, 25)
          : remaining
        : undefined;
      const out = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: gsi ? "gsi1" : undefined,
          KeyConditionExpression: keyCondition,
          FilterExpression: filterTerms.length > 0 ? filterTerms.join(" AND ") : undefined,
          ScanIndexForward: !query.descending,
          Limit: pageLimit,
          ExclusiveStartKey: start,
          ConsistentRead: !gsi,
          ...b.attributes(),
        }),
      );
      const page = gsi
        ? await this.#itemsOf((out.Items ?? []) as Item[], query.pk)
        : ((out.Items ?? []) as Item[]);
      for (const [i, item] of page.entries()) {
        if (prefixHere !== undefined && !String(item[sortName]).startsWith(prefixHere)) continue;
        if (filterHere !== undefined && !matches(item, filterHere)) continue;
        items.push(item);
        if (items.length === limit && i < page.length - 1) {
          // Stopped inside DynamoDB's page: resume right after the last item kept.
          return { items, cursor: encodeCursor(positionOf(item, query.index)) };
        }
      }
      const next = out.LastEvaluatedKey as Record<string, string> | undefined;
      if (next === undefined) return { items, cursor: null };
      if (items.length >= limit) return { items, cursor: encodeCursor(next) };
      start = next;
    }
  }

  async #batchGetChunk(keys: ItemKey[]): Promise<Item[]> {
    const found: Item[] = [];
    let pending: Record<string, unknown>[] = keys.map(keyOf);
    for (let attempt = 0; pending.length > 0; attempt++) {
      await this.#backoff(attempt, "BatchGetItem", pending.length);
      const out = await this.doc.send(
        new BatchGetCommand({
          RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } },
        }),
      );
      found.push(...((out.Responses?.[this.tableName] ?? []) as Item[]));
      pending = out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return found;
  }

  async #batchDeleteChunk(keys: ItemKey[]): Promise<void> {
    let pending = keys.map((key) => ({ DeleteRequest: { Key: keyOf(key) } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      await this.#backoff(attempt, "BatchWriteItem", pending.length);
      const out = await this.doc.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
      );
      pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
  }

  /** Waits before a retry round (none before the first), and gives up after the last. */
  async #backoff(attempt: number, operation: string, left: number): Promise<void> {
    if (attempt === 0) return;
    if (attempt >= this.#attempts) {
      throw new RetryableError(
        "store_throttled",
        `${operation} left ${left} keys unprocessed after ${this.#attempts} attempts (throttled): try again later`,
      );
    }
    const delay = Math.min(this.#backoffMs * 2 ** (attempt - 1), 2_000);
    await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)));
  }

  /** Runs one write, translating the vendor errors that the port names. */
  async #write<T>(key: ItemKey, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw translate(error, key);
    }
  }
}

/** Maps the DynamoDB errors the port gives a meaning to; returns others unchanged. */
export function translate(error: unknown, key: ItemKey): unknown {
  const name = (error as { name?: unknown } | null)?.name;
  const message = String((error as { message?: unknown } | null)?.message ?? "");
  const where = `item ${key.pk} / ${key.sk}`;
  if (name === "ConditionalCheckFailedException") {
    return new ConflictError(`the condition on ${where} does not hold`, "condition_failed", error);
  }
  if (name === "ValidationException" && /size.*exceeded/i.test(message)) {
    // The message reaches API clients: it names the limit, not the internal key.
    const tooLarge = new TooLargeError("a record would exceed the store's limit of 400 KB");
    return Object.assign(tooLarge, { cause: error });
  }
  if (name === "ValidationException" && /document path .* invalid/i.test(message)) {
    return new TypeError(
      `update of ${where}: a nested path goes through a map that does not exist; set the parent map first`,
      { cause: error },
    );
  }
  return error;
}

function keyOf(key: ItemKey): Record<string, string> {
  return { pk: key.pk, sk: key.sk };
}

/** DynamoDB refuses a batch with the same key twice. */
function unique(keys: ItemKey[]): ItemKey[] {
  const seen = new Map<string, ItemKey>();
  for (const key of keys) seen.set(JSON.stringify([key.pk, key.sk]), key);
  return [...seen.values()];
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Equality of top-level attributes, as a filter means it (`null`: absent or null). */
function matches(item: Item, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([name, value]) =>
    value === null ? item[name] === undefined || item[name] === null : item[name] === value,
  );
}
