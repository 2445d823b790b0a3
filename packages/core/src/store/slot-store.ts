/**
 * The stored running slots of tenants: one running item per tenant (`RUNNING`)
 * whose attributes `run#{task}` hold the slots (with the time each was
 * claimed) and `count` counts them, the tenant's waiting list
 * (`WAIT#{created_at}#{task}`, oldest first), and the global `gsi1` partitions
 * the sweep reads them by (`RUNNING`, `WAITING`, and `SLOTS` for the numbered
 * slot items of earlier versions). The conditions that keep the count right
 * live here; when to claim and release is `service/running-slots.ts`'s.
 */
import { isErrorKind } from "../errors";
import type { Item, ItemKey, ItemStore } from "../ports/item-store";
import {
  LEGACY_SLOTS_INDEX,
  RUNNING_INDEX,
  runningKey,
  SLOT_HOLDER_PREFIX,
  slotHolder,
  tenantPk,
  WAITING_INDEX,
  WAITING_PREFIX,
  waitingKey,
} from "./keys";
import { queryAll } from "./query-all";

/** A task waiting for a slot; `branch` absent means `main`. */
export interface WaitingRecord extends ItemKey {
  tenant_id: string;
  task_id: string;
  branch?: string;
}

/** A slot held: by which task of which tenant, since when (ISO time). */
export interface HeldSlot {
  tenant: string;
  taskId: string;
  claimedAt: string;
}

export class SlotStore {
  constructor(private readonly items: ItemStore) {}

  /** Takes a slot for the task if fewer than `limit` are held and it holds none; false otherwise. */
  async claim(tenant: string, taskId: string, claimedAt: string, limit: number): Promise<boolean> {
    try {
      await this.items.update(
        runningKey(tenant),
        {
          set: [
            [[slotHolder(taskId)], claimedAt],
            [["tenant_id"], tenant],
            [["gsi1pk"], RUNNING_INDEX],
            [["gsi1sk"], tenant],
          ],
          add: [[["count"], 1]],
        },
        { below: { count: limit }, equals: { [slotHolder(taskId)]: null } },
      );
      return true;
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      return false;
    }
  }

  /** When the task claimed the slot it holds; null when it holds none. */
  async heldSince(tenant: string, taskId: string): Promise<string | null> {
    const running = await this.items.get(runningKey(tenant));
    const claimedAt = running?.[slotHolder(taskId)];
    return typeof claimedAt === "string" ? claimedAt : null;
  }

  /** Frees the task's slot claimed at `claimedAt`; nothing when it was freed meanwhile. */
  async free(tenant: string, taskId: string, claimedAt: string): Promise<void> {
    await this.items
      .update(
        runningKey(tenant),
        { remove: [[slotHolder(taskId)]], add: [[["count"], -1]] },
        { equals: { [slotHolder(taskId)]: claimedAt } },
      )
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
  }

  /** Lists the task as waiting for a slot (for `branch`, `main` when absent). */
  async addWaiting(tenant: string, createdAt: string, taskId: string, branch: string) {
    await this.items.put({
      ...waitingKey(tenant, createdAt, taskId),
      tenant_id: tenant,
      task_id: taskId,
      ...(branch === "main" ? {} : { branch }),
      gsi1pk: WAITING_INDEX,
      gsi1sk: `${createdAt}#${tenant}#${taskId}`,
    });
  }

  /** The tenant's waiting tasks, oldest first, read 100 at a time. */
  async *waiting(tenant: string): AsyncGenerator<WaitingRecord> {
    const query = { pk: tenantPk(tenant), prefix: WAITING_PREFIX, limit: 100 };
    for await (const item of queryAll(this.items, query)) yield item as unknown as WaitingRecord;
  }

  /** The tenant's oldest waiting task, or null. */
  async firstWaiting(tenant: string): Promise<WaitingRecord | null> {
    const page = await this.items.query({ pk: tenantPk(tenant), prefix: WAITING_PREFIX, limit: 1 });
    return (page.items[0] as unknown as WaitingRecord | undefined) ?? null;
  }

  async deleteWaiting(waiting: WaitingRecord): Promise<void> {
    await this.items.delete({ pk: waiting.pk, sk: waiting.sk });
  }

  /** Every slot held, of every tenant (the sweep's read). */
  async *heldSlots(): AsyncGenerator<HeldSlot> {
    const query = { pk: RUNNING_INDEX, index: "gsi1" as const, limit: 100 };
    for await (const running of queryAll(this.items, query)) {
      const tenant = running.tenant_id as string;
      for (const [name, claimedAt] of Object.entries(running)) {
        if (!name.startsWith(SLOT_HOLDER_PREFIX) || typeof claimedAt !== "string") continue;
        yield { tenant, taskId: name.slice(SLOT_HOLDER_PREFIX.length), claimedAt };
      }
    }
  }

  /** The numbered slot items of earlier versions taken before `before` (ISO time). */
  async *legacySlots(before: string): AsyncGenerator<Item> {
    const between: [string, string] = ["0", before];
    yield* queryAll(this.items, { pk: LEGACY_SLOTS_INDEX, index: "gsi1", between, limit: 100 });
  }

  /** Deletes a legacy slot item if it still holds the same task. */
  async deleteLegacySlot(slot: Item): Promise<void> {
    await this.items
      .delete({ pk: slot.pk, sk: slot.sk }, { equals: { task_id: slot.task_id as string } })
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
  }

  /** The tenants with waiting tasks (one entry per waiting task). */
  async *waitingTenants(): AsyncGenerator<string> {
    const query = { pk: WAITING_INDEX, index: "gsi1" as const, limit: 100 };
    for await (const item of queryAll(this.items, query)) yield item.tenant_id as string;
  }
}
