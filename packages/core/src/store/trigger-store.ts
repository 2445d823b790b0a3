/**
 * The stored triggers (`TRIGGER#{id}` under the tenant, with the secret), the
 * global pointer by which a delivery finds its tenant (`HOOK#{id}`: a trigger's
 * URL names none), and the markers of deliveries
 * (`HOOKDELIVERY#{trigger}#{webhook-id}`, `run-marker.ts`).
 */
import type { Item, ItemStore } from "../ports/item-store";
import { TRIGGER_PREFIX, tenantPk, triggerDeliveryKey, triggerHookKey, triggerKey } from "./keys";
import { claimRunMarker, markRunStarted, type RunMarkerClaim } from "./run-marker";

export class TriggerStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes a new trigger (its attributes as given) and its pointer. */
  async create(tenant: string, id: string, record: Record<string, unknown>): Promise<void> {
    await this.items.put({ ...triggerKey(tenant, id), ...record }, { exists: false });
    await this.items.put({ ...triggerHookKey(id), tenant_id: tenant });
  }

  async get(tenant: string, id: string): Promise<Item | null> {
    return this.items.get(triggerKey(tenant, id));
  }

  /** The tenant the pointer of a trigger names; null when there is none. */
  async tenantOf(id: string): Promise<string | null> {
    const pointer = await this.items.get(triggerHookKey(id));
    return typeof pointer?.tenant_id === "string" ? pointer.tenant_id : null;
  }

  /** The tenant's triggers (at most 1000). */
  async list(tenant: string): Promise<Item[]> {
    const query = { pk: tenantPk(tenant), prefix: TRIGGER_PREFIX, limit: 1000 };
    return (await this.items.query(query)).items;
  }

  /** Deletes the pointer first: from then on no delivery finds the trigger. */
  async delete(tenant: string, id: string): Promise<void> {
    await this.items.delete(triggerHookKey(id));
    await this.items.delete(triggerKey(tenant, id));
  }

  /** The marker of one delivery (`run-marker.ts`). */
  async claimDelivery(
    tenant: string,
    id: string,
    webhookId: string,
    taskId: string,
    nowSeconds: number,
    ttlSeconds: number,
  ): Promise<RunMarkerClaim> {
    const key = triggerDeliveryKey(tenant, id, webhookId);
    return claimRunMarker(this.items, key, taskId, nowSeconds, ttlSeconds);
  }

  async markDeliveryStarted(tenant: string, id: string, webhookId: string): Promise<void> {
    await markRunStarted(this.items, triggerDeliveryKey(tenant, id, webhookId));
  }
}
