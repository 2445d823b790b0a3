/**
 * The stored leases of a tenant's open streams: `S#{id}` in the partition
 * `T#{tenant}#STREAMS`, each with the time it runs out (`until`, epoch ms) and
 * a TTL. `service/stream-leases.ts` says how they are taken and renewed.
 */
import type { ItemStore } from "../ports/item-store";
import { streamLeaseKey, streamLeasesPk } from "./keys";
import { queryAll } from "./query-all";

export class StreamLeaseStore {
  constructor(private readonly items: ItemStore) {}

  /** Writes (or renews) a lease until `until` (epoch ms). */
  async put(tenant: string, id: string, until: number): Promise<void> {
    await this.items.put({ ...streamLeaseKey(tenant, id), until, ttl: Math.ceil(until / 1000) });
  }

  async delete(tenant: string, id: string): Promise<void> {
    await this.items.delete(streamLeaseKey(tenant, id));
  }

  /** How many of the tenant's leases run out after `now` (epoch ms). */
  async countOpen(tenant: string, now: number): Promise<number> {
    let open = 0;
    for await (const item of queryAll(this.items, { pk: streamLeasesPk(tenant) })) {
      if (typeof item.until === "number" && item.until > now) open++;
    }
    return open;
  }
}
