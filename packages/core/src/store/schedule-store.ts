/**
 * The stored schedules (`SCHEDULE#{id}` under the tenant, also in the `gsi1`
 * partition `SCHEDULES` so that the local timer finds them all at start) and
 * the markers of their due runs (`SCHEDRUN#{id}#{due_at}`, `run-marker.ts`).
 */
import { isErrorKind } from "../errors";
import type { Budget } from "../model";
import type { ItemStore } from "../ports/item-store";
import { SCHEDULE_PREFIX, SCHEDULES_INDEX, scheduleKey, scheduleRunKey, tenantPk } from "./keys";
import { queryAll } from "./query-all";
import { claimRunMarker, markRunStarted, type RunMarkerClaim } from "./run-marker";

/** The stored schedule (its key and index entry are the store's). */
export interface ScheduleRecord {
  tenant_id: string;
  schedule_id: string;
  name: string;
  cron: string;
  timezone: string;
  goal: string | null;
  plan: unknown[] | null;
  namespace: string;
  enabled: boolean;
  inputs: Record<string, unknown>;
  response_format: Record<string, unknown> | null;
  budget: Budget | null;
  webhook_url: string | null;
  metadata: Record<string, unknown>;
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
}

const itemOf = (record: ScheduleRecord) => ({
  ...record,
  ...scheduleKey(record.tenant_id, record.schedule_id),
  gsi1pk: SCHEDULES_INDEX,
  gsi1sk: `${record.tenant_id}#${record.schedule_id}`,
});

export class ScheduleStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes a new schedule; its id must be new. */
  async create(record: ScheduleRecord): Promise<void> {
    await this.items.put(itemOf(record), { exists: false });
  }

  /** Replaces a schedule if it was last updated at `updatedAt` (`ConflictError` otherwise). */
  async replace(record: ScheduleRecord, updatedAt: string): Promise<void> {
    await this.items.put(itemOf(record), { exists: true, equals: { updated_at: updatedAt } });
  }

  async get(tenant: string, id: string): Promise<ScheduleRecord | null> {
    return (await this.items.get(scheduleKey(tenant, id))) as unknown as ScheduleRecord | null;
  }

  /** The tenant's schedules (at most 1000). */
  async list(tenant: string): Promise<ScheduleRecord[]> {
    const query = { pk: tenantPk(tenant), prefix: SCHEDULE_PREFIX, limit: 1000 };
    return (await this.items.query(query)).items as unknown as ScheduleRecord[];
  }

  /** Every schedule of every tenant, 500 a read. */
  async *all(): AsyncGenerator<ScheduleRecord> {
    const query = { pk: SCHEDULES_INDEX, index: "gsi1" as const, limit: 500 };
    for await (const item of queryAll(this.items, query)) yield item as unknown as ScheduleRecord;
  }

  async delete(tenant: string, id: string): Promise<void> {
    await this.items.delete(scheduleKey(tenant, id));
  }

  /** Sets when it last ran, if it still exists. */
  async setLastRun(tenant: string, id: string, at: string): Promise<void> {
    await this.items
      .update(scheduleKey(tenant, id), { set: [[["last_run_at"], at]] }, { exists: true })
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
  }

  /** The marker of the run due at `dueAt` (`run-marker.ts`). */
  async claimRun(
    tenant: string,
    id: string,
    dueAt: string,
    taskId: string,
    nowSeconds: number,
    ttlSeconds: number,
  ): Promise<RunMarkerClaim> {
    const key = scheduleRunKey(tenant, id, dueAt);
    return claimRunMarker(this.items, key, taskId, nowSeconds, ttlSeconds);
  }

  async markRunStarted(tenant: string, id: string, dueAt: string, skipped?: string) {
    await markRunStarted(this.items, scheduleRunKey(tenant, id, dueAt), skipped);
  }
}
