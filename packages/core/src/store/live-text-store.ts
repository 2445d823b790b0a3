/**
 * The stored live text of a task (`T#{t}#K#{task}#LIVE`): a watch mark
 * (`WATCH`, while some stream reads) and short-lived batches of text
 * (`TOK#{epoch ms:15}#{writer}#{n:6}`), ordered by time. `service/token-relay.ts`
 * says who writes and reads them.
 */
import type { Item, ItemStore } from "../ports/item-store";
import { LIVE_BATCHES_END, liveBatchesFrom, liveBatchSk, livePk, liveWatchKey } from "./keys";
import { queryAll } from "./query-all";

export class LiveTextStore {
  constructor(private readonly items: ItemStore) {}

  /** Marks the task watched until `until` (epoch ms); the item expires then. */
  async putWatch(tenant: string, taskId: string, until: number): Promise<void> {
    await this.items.put({ ...liveWatchKey(tenant, taskId), until, ttl: Math.ceil(until / 1000) });
  }

  /** Until when the task is watched (epoch ms); null when it has no mark. */
  async watchedUntil(tenant: string, taskId: string): Promise<number | null> {
    const mark = await this.items.get(liveWatchKey(tenant, taskId));
    return typeof mark?.until === "number" ? mark.until : null;
  }

  /** Writes one batch, `n`th of its writer, at `at` (epoch ms), living until `expires`. */
  async putBatch(
    tenant: string,
    taskId: string,
    batch: { at: number; writer: string; n: number; expires: number; event: unknown },
  ): Promise<void> {
    await this.items.put({
      pk: livePk(tenant, taskId),
      sk: liveBatchSk(batch.at, batch.writer, batch.n),
      at: batch.at,
      writer: batch.writer,
      n: batch.n,
      ttl: Math.ceil(batch.expires / 1000),
      event: batch.event,
    });
  }

  /** The batches written from `from` (epoch ms) on, oldest first. */
  batchesFrom(tenant: string, taskId: string, from: number): AsyncGenerator<Item> {
    const between: [string, string] = [liveBatchesFrom(Math.max(0, from)), LIVE_BATCHES_END];
    return queryAll(this.items, { pk: livePk(tenant, taskId), between });
  }
}
