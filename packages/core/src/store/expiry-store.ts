/**
 * The expiry markers of finished tasks (`service/retention.ts`): one item in the
 * task's own partition (so deleting the task's items can leave it for last),
 * listed by time through one global index partition, as the sweep's other
 * indexes are (`sweep-index.ts`).
 */
import type { ItemStore } from "../ports/item-store";
import { EXPIRY_INDEX_PK, expiryKey } from "./keys";

/** A task due to be deleted at `expires_at` (ISO 8601). */
export interface ExpiryMarker {
  tenant_id: string;
  task_id: string;
  expires_at: string;
}

export class ExpiryStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes (or moves) the task's marker to `expiresAt`. */
  async put(tenant: string, taskId: string, expiresAt: string): Promise<void> {
    await this.items.put({
      ...expiryKey(tenant, taskId),
      gsi1pk: EXPIRY_INDEX_PK,
      gsi1sk: `${expiresAt}#${tenant}#${taskId}`,
      tenant_id: tenant,
      task_id: taskId,
      expires_at: expiresAt,
    });
  }

  async delete(tenant: string, taskId: string): Promise<void> {
    await this.items.delete(expiryKey(tenant, taskId));
  }

  /** Up to `limit` markers due at `now` (ISO 8601), oldest first. */
  async due(now: string, limit: number): Promise<ExpiryMarker[]> {
    const page = await this.items.query({
      pk: EXPIRY_INDEX_PK,
      index: "gsi1",
      between: ["0", `${now}#~`],
      limit,
    });
    return page.items.flatMap((item) =>
      typeof item.tenant_id === "string" &&
      typeof item.task_id === "string" &&
      typeof item.expires_at === "string"
        ? [{ tenant_id: item.tenant_id, task_id: item.task_id, expires_at: item.expires_at }]
        : [],
    );
  }
}
