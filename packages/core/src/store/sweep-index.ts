/**
 * The sweep index read: running (and waiting) branches listed in the `gsi1`
 * partitions `SWEEP#{shard}`, sorted by when they started to run (`sweepIndex`
 * in `keys.ts` writes the entry, `vm/step.ts` and the services set it).
 */
import type { ItemStore } from "../ports/item-store";
import { SWEEP_SHARDS, sweepIndexPk } from "./keys";
import { queryAll } from "./query-all";
import type { BranchRecord } from "./records";

export class SweepIndex {
  constructor(private readonly items: ItemStore) {}

  /** The branches listed before `before` (ISO time), shard by shard, oldest first in each. */
  async *listedBefore(before: string): AsyncGenerator<BranchRecord> {
    for (let shard = 0; shard < SWEEP_SHARDS; shard++) {
      const between: [string, string] = ["0", before];
      const query = { pk: sweepIndexPk(shard), index: "gsi1" as const, between, limit: 100 };
      for await (const item of queryAll(this.items, query)) yield item as unknown as BranchRecord;
    }
  }
}
