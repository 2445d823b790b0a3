/**
 * A marker that makes one run of something start one task, however often it is
 * delivered (a schedule's due run, a trigger's delivery): written on condition
 * it does not exist (or has expired), then set `started` once the task is
 * written. A second delivery finds it and tells a finished start from one cut
 * short.
 */
import { isErrorKind } from "../errors";
import type { ItemKey, ItemStore } from "../ports/item-store";

/** What `claimRunMarker` found: this delivery wrote it, or an earlier one did (started or not). */
export type RunMarkerClaim = "claimed" | "started" | "unfinished";

/** Writes the marker with `task_id` and `started: false`, living `ttlSeconds` from `nowSeconds`. */
export async function claimRunMarker(
  items: ItemStore,
  key: ItemKey,
  taskId: string,
  nowSeconds: number,
  ttlSeconds: number,
): Promise<RunMarkerClaim> {
  try {
    await items.put(
      { ...key, task_id: taskId, started: false, ttl: nowSeconds + ttlSeconds },
      { exists: false, orExpiredBefore: nowSeconds },
    );
    return "claimed";
  } catch (error) {
    if (!isErrorKind(error, "conflict")) throw error;
    const held = await items.get(key);
    return held?.started === true ? "started" : "unfinished";
  }
}

/** Marks the run's task written (`skipped`: why no task was, when none will be). */
export async function markRunStarted(
  items: ItemStore,
  key: ItemKey,
  skipped?: string,
): Promise<void> {
  const set: Array<[string[], unknown]> = [[["started"], true]];
  if (skipped !== undefined) set.push([["skipped"], skipped]);
  await items.update(key, { set });
}
