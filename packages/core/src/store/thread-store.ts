/**
 * Threads as stored (keys in `keys.ts`): one item per thread in the tenant's
 * partition (to list them) and one per turn in the thread's own partition, in
 * the order the turns started. A turn's task keeps its own link too
 * (`TaskRecord.thread`), so the turn items can be written again from it.
 */
import type { ItemStore } from "../ports/item-store";
import { THREAD_PREFIX, TURN_PREFIX, threadKey, threadTurnKey, threadTurnsPk } from "./keys";
import { queryAll } from "./query-all";
import type { Page } from "./task-store";

/** A thread: the conversation that began with task `thread_id`. */
export interface ThreadRecord {
  tenant_id: string;
  thread_id: string;
  /** The first turn's goal, what lists show. */
  title: string;
  /** The turn started last: where a continue that names only the thread goes on. */
  latest_task_id: string;
  created_at: string;
  updated_at: string;
}

/** One turn: a task, and the task and branch whose answer it continues (none for the first). */
export interface TurnRecord {
  thread_id: string;
  task_id: string;
  /** 1 for the first turn, and one more than its parent's. */
  turn: number;
  parent: { task_id: string; branch: string } | null;
  goal: string | null;
  created_at: string;
}

export class ThreadStore {
  constructor(private readonly items: ItemStore) {}

  async get(tenant: string, threadId: string): Promise<ThreadRecord | null> {
    return (await this.items.get(threadKey(tenant, threadId))) as unknown as ThreadRecord | null;
  }

  /** Writes the thread (new, or its latest turn and time moved on). */
  async put(record: ThreadRecord): Promise<void> {
    await this.items.put({ ...threadKey(record.tenant_id, record.thread_id), ...record });
  }

  /** Writes a turn; the same turn written again is the same item. */
  async putTurn(tenant: string, record: TurnRecord): Promise<void> {
    await this.items.put({
      ...threadTurnKey(tenant, record.thread_id, record.created_at, record.task_id),
      ...record,
    });
  }

  /** One page of the tenant's threads. */
  async list(
    tenant: string,
    options: { limit: number; cursor?: string | null },
  ): Promise<Page<ThreadRecord>> {
    const page = await this.items.query({
      pk: threadKey(tenant, "").pk,
      prefix: THREAD_PREFIX,
      limit: options.limit,
      cursor: options.cursor ?? null,
    });
    return { items: page.items as unknown as ThreadRecord[], cursor: page.cursor };
  }

  /** Every turn of the thread, oldest first. */
  async turns(tenant: string, threadId: string): Promise<TurnRecord[]> {
    const out: TurnRecord[] = [];
    const query = { pk: threadTurnsPk(tenant, threadId), prefix: TURN_PREFIX, limit: 100 };
    for await (const item of queryAll(this.items, query)) out.push(item as unknown as TurnRecord);
    return out;
  }
}
