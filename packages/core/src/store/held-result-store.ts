/**
 * The held results of parallel groups (`vm/group.ts`): each member runs in its
 * own invocation and holds its result apart, at `G#{bid}#{base}#{seq_no}`, until
 * the group is complete and the join commits the results one by one, in plan
 * order. A result is written once: a member run twice keeps the first.
 *
 * @example
 * const written = await stores.heldResults.putOnce(branch, result);
 * const held = await stores.heldResults.get(branch, base, seq);
 */
import { isErrorKind } from "../errors";
import type { LlmCall } from "../model";
import type { ItemStore } from "../ports/item-store";
import { groupHeldKey } from "./keys";

/** A member's result, held apart until the group is complete. */
export interface HeldResult {
  pk: string;
  sk: string;
  seq_no: number;
  base: string;
  inputs: unknown;
  /** As stored (large values spilled to blobs). */
  outputs: Record<string, unknown>;
  pc_after: number | null;
  details: Record<string, unknown> | null;
  /** A failed member: the error as `classifyFailure` will see it again. */
  error: { kind: string; code: string; message: string; details?: unknown } | null;
  llm_calls: LlmCall[];
  started_at: string;
  finished_at: string;
  duration_ms: number;
}

/** What a member holds: its result, keyed by the branch, the group's base and its `seq_no`. */
export type HeldValue = Omit<HeldResult, "pk" | "sk">;

/** The branch a held result belongs to: its partition and its branch id. */
export type HeldBranch = { pk: string; bid: string };

export class HeldResultStore {
  constructor(private readonly items: ItemStore) {}

  /** Member `seq`'s held result of the group that started after `base`, or null. */
  async get(branch: HeldBranch, base: string, seq: number): Promise<HeldResult | null> {
    const item = await this.items.get(groupHeldKey(branch, base, seq));
    return item as HeldResult | null;
  }

  /** The held results of these members, in their order (null where none is held). */
  list(branch: HeldBranch, base: string, seqs: readonly number[]): Promise<(HeldResult | null)[]> {
    return Promise.all(seqs.map((seq) => this.get(branch, base, seq)));
  }

  /** Holds a member's result once: false when another delivery held one first (that one stays). */
  async putOnce(branch: HeldBranch, result: HeldValue): Promise<boolean> {
    try {
      await this.items.put(
        { ...groupHeldKey(branch, result.base, result.seq_no), ...result },
        { exists: false },
      );
      return true;
    } catch (error) {
      if (isErrorKind(error, "conflict")) return false;
      throw error;
    }
  }
}
