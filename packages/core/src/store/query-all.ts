/**
 * Reading a whole query: the one loop over pages in the code base. A query
 * answers a page and a cursor; every reader that wants every item (or reads on
 * until it has enough) goes through here, so a reader cannot forget the cursor
 * or follow it wrong.
 */
import type { Item, ItemStore, Query, QueryPage } from "../ports/item-store";

/**
 * Every page of a query, in order, following the cursor to its end. Stopping the
 * iteration (`break`, `return`) reads no further page.
 *
 * @example
 * for await (const page of queryPages(items, { pk, prefix: DOCUMENT_PREFIX })) read += page.items.length;
 */
export async function* queryPages(
  items: ItemStore,
  query: Omit<Query, "cursor">,
): AsyncGenerator<QueryPage> {
  let cursor: string | null = null;
  do {
    const page: QueryPage = await items.query({ ...query, cursor });
    yield page;
    cursor = page.cursor;
  } while (cursor);
}

/**
 * Every item of a query, in order, page after page (`limit` is the page size).
 * Stopping the iteration reads no further page.
 *
 * @example
 * for await (const item of queryAll(items, { pk: tenantPk("acme"), prefix: WAITING_PREFIX, limit: 100 })) ...
 */
export async function* queryAll(
  items: ItemStore,
  query: Omit<Query, "cursor">,
): AsyncGenerator<Item> {
  for await (const page of queryPages(items, query)) yield* page.items;
}

/** Every item of a query, in one array (`queryAll` collected). */
export async function queryArray(items: ItemStore, query: Omit<Query, "cursor">): Promise<Item[]> {
  const all: Item[] = [];
  for await (const item of queryAll(items, query)) all.push(item);
  return all;
}
