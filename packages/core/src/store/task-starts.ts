/**
 * The markers of task starts under way (`T#{t}` / `START#{task}`, listed in the
 * `gsi1` partition `STARTS` by time): `service/task-starts.ts` says why a start
 * needs one and how the sweep repairs a start cut short.
 */
import type { ItemStore } from "../ports/item-store";
import { STARTS_INDEX, startKey } from "./keys";
import { queryAll } from "./query-all";

/** Records that a start of the task is under way (step 2 of `service/task-starts.ts`). */
export async function markStart(
  items: ItemStore,
  tenant: string,
  taskId: string,
  now: string,
): Promise<void> {
  await items.put({
    ...startKey(tenant, taskId),
    tenant_id: tenant,
    task_id: taskId,
    gsi1pk: STARTS_INDEX,
    gsi1sk: `${now}#${tenant}#${taskId}`,
  });
}

/** The start is complete (step 4 of `service/task-starts.ts`). */
export async function clearStart(items: ItemStore, tenant: string, taskId: string): Promise<void> {
  await items.delete(startKey(tenant, taskId));
}

/** The starts begun before `before` (ISO time) that never completed. */
export async function* unfinishedStarts(
  items: ItemStore,
  before: string,
): AsyncGenerator<{ tenant: string; taskId: string }> {
  const query = {
    pk: STARTS_INDEX,
    index: "gsi1" as const,
    between: ["0", before] as [string, string],
  };
  for await (const item of queryAll(items, { ...query, limit: 100 })) {
    yield { tenant: item.tenant_id as string, taskId: item.task_id as string };
  }
}
