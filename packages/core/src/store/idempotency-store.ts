/**
 * Idempotency keys, held for a day each: a task's (`IDEM#`) and a retry's
 * (`RETRYKEY#`). A claim writes the key unless an unexpired one is there, in
 * one conditional write, so two requests with the same key never both claim it;
 * the one that loses reads what the winner holds.
 */
import { isErrorKind } from "../errors";
import type { Item, ItemKey, ItemStore } from "../ports/item-store";

/** How long a key is held. */
export const IDEMPOTENCY_SECONDS = 86_400;

/**
 * A claim: made now, or the item that holds the key, with the write's conflict
 * (`held` null: the key went between the write and the read).
 */
export type Claim = { claimed: true } | { claimed: false; held: Item | null; conflict: unknown };

export class IdempotencyStore {
  constructor(private readonly items: ItemStore) {}

  /**
   * Holds `key` with `fields` until `seconds` (a day by default) after
   * `nowSeconds`, unless an unexpired claim holds it.
   */
  async claim(
    key: ItemKey,
    fields: Record<string, unknown>,
    nowSeconds: number,
    seconds = IDEMPOTENCY_SECONDS,
  ): Promise<Claim> {
    try {
      await this.items.put(
        { ...key, ...fields, ttl: nowSeconds + seconds },
        { exists: false, orExpiredBefore: nowSeconds },
      );
      return { claimed: true };
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      return { claimed: false, held: await this.items.get(key), conflict: error };
    }
  }

  /**
   * Takes the key over from the claim that holds `heldTaskId` (one conditional
   * write: of two requests taking it over at once, one wins); false when
   * another claim holds it now.
   */
  async takeOver(
    key: ItemKey,
    heldTaskId: string,
    fields: Record<string, unknown>,
    nowSeconds: number,
    seconds: number,
  ): Promise<boolean> {
    try {
      await this.items.put(
        { ...key, ...fields, ttl: nowSeconds + seconds },
        { equals: { task_id: heldTaskId } },
      );
      return true;
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      return false;
    }
  }

  /** Holds `key` with `fields` for `seconds` from `nowSeconds`, whatever held it before. */
  async hold(
    key: ItemKey,
    fields: Record<string, unknown>,
    nowSeconds: number,
    seconds: number,
  ): Promise<void> {
    await this.items.put({ ...key, ...fields, ttl: nowSeconds + seconds });
  }

  /**
   * Notes on the claim that holds `heldTaskId` that its request was answered
   * (`answered: true`); nothing when another claim holds the key now.
   */
  async markAnswered(key: ItemKey, heldTaskId: string): Promise<void> {
    await this.items
      .update(key, { set: [[["answered"], true]] }, { equals: { task_id: heldTaskId } })
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
  }

  /** The claim that holds `key`, expired or not (the table's TTL removes it later). */
  get(key: ItemKey): Promise<Item | null> {
    return this.items.get(key);
  }

  /**
   * Lets the key go (a claim whose work made nothing); with `heldTaskId`, only
   * while that claim holds it.
   */
  async release(key: ItemKey, heldTaskId?: string): Promise<void> {
    if (heldTaskId === undefined) return this.items.delete(key);
    await this.items.delete(key, { equals: { task_id: heldTaskId } }).catch((error: unknown) => {
      if (!isErrorKind(error, "conflict")) throw error;
    });
  }
}
