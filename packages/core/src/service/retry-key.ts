/**
 * The `Idempotency-Key` of a retry, held as a task's is (`TaskService`): for 24
 * hours the key names the body it came with, so the same key with another body
 * answers 409 `idempotency_key_reused` instead of the branch the first body made.
 * The item sits in the tenant's partition beside the tasks' keys, under its own
 * prefix, and expires by TTL.
 */
import { ConflictError, isErrorKind } from "../errors";
import type { ItemStore } from "../ports/item-store";
import { tenantPk } from "../store/keys";
import { digest } from "../vm/ids";
import { stableJson } from "./stable-json";

const DAY_SECONDS = 86_400;

const itemKey = (tenant: string, taskId: string, key: string) => ({
  pk: tenantPk(tenant),
  sk: `RETRYIDEM#${taskId}#${key}`,
});

function reused(key: string, taskId: string): ConflictError {
  return new ConflictError(
    `the Idempotency-Key '${key}' was used for a retry of task '${taskId}' with a different body within 24 hours: use a new key for a new retry`,
    "idempotency_key_reused",
  );
}

/** Throws 409 when the key is held, unexpired, for another body; else nothing. */
export async function checkRetryKey(
  items: ItemStore,
  tenant: string,
  taskId: string,
  key: string,
  body: unknown,
  now: number,
): Promise<void> {
  const held = await items.get(itemKey(tenant, taskId, key));
  if (!held || (held.ttl as number) < Math.floor(now / 1000)) return;
  if (held.body_hash !== digest(stableJson(body))) throw reused(key, taskId);
}

/** Records the key with its body (or finds it held for the same body); 409 for another body. */
export async function claimRetryKey(
  items: ItemStore,
  tenant: string,
  taskId: string,
  key: string,
  body: unknown,
  now: number,
): Promise<void> {
  const seconds = Math.floor(now / 1000);
  const bodyHash = digest(stableJson(body));
  try {
    await items.put(
      { ...itemKey(tenant, taskId, key), body_hash: bodyHash, ttl: seconds + DAY_SECONDS },
      { exists: false, orExpiredBefore: seconds },
    );
  } catch (error) {
    if (!isErrorKind(error, "conflict")) throw error;
    const held = await items.get(itemKey(tenant, taskId, key));
    if (held && held.body_hash !== bodyHash) throw reused(key, taskId);
  }
}

/** Lets the key go again after a retry that made nothing. */
export async function releaseRetryKey(
  items: ItemStore,
  tenant: string,
  taskId: string,
  key: string,
): Promise<void> {
  await items.delete(itemKey(tenant, taskId, key));
}
