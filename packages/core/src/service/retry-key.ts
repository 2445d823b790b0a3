/**
 * The `Idempotency-Key` of a retry, held as a task's is (`TaskService`): for 24
 * hours the key names the body it came with, so the same key with another body
 * answers 409 `idempotency_key_reused` instead of the branch the first body made.
 * The item sits in the tenant's partition beside the tasks' keys, under its own
 * prefix, and expires by TTL. It also names the branch its claim makes: a key
 * used again after its 24 hours is a new claim with a branch of its own, never
 * a replay of the branch it made the day before.
 */
import { ConflictError } from "../errors";
import { digest } from "../ids";
import { retryIdempotencyKey } from "../store/keys";
import type { TaskStore } from "../store/task-store";
import { stableJson } from "./stable-json";

function reused(key: string, taskId: string): ConflictError {
  return new ConflictError(
    `the Idempotency-Key '${key}' was used for a retry of task '${taskId}' with a different body within 24 hours: use a new key for a new retry`,
    "idempotency_key_reused",
  );
}

/** The branch a claim made at `seconds` names; a key held from before names carried none. */
function branchOf(held: Record<string, unknown>, taskId: string, key: string): string {
  return typeof held.branch === "string"
    ? held.branch
    : `retry-${digest(taskId, key).slice(0, 12)}`;
}

/**
 * Throws 409 when the key is held, unexpired, for another body. Held for this
 * body, it answers the name of the branch its claim makes (to replay); free, null.
 */
export async function checkRetryKey(
  store: TaskStore,
  tenant: string,
  taskId: string,
  key: string,
  body: unknown,
  now: number,
): Promise<string | null> {
  const held = await store.idempotency.get(retryIdempotencyKey(tenant, taskId, key));
  if (!held || (held.ttl as number) < Math.floor(now / 1000)) return null;
  if (held.body_hash !== digest(stableJson(body))) throw reused(key, taskId);
  return branchOf(held, taskId, key);
}

/**
 * Records the key with its body (or finds it held for the same body, a request
 * sent twice); 409 for another body. Answers the name of the claim's branch,
 * the same for every request that shares the claim.
 */
export async function claimRetryKey(
  store: TaskStore,
  tenant: string,
  taskId: string,
  key: string,
  body: unknown,
  now: number,
): Promise<string> {
  const seconds = Math.floor(now / 1000);
  const bodyHash = digest(stableJson(body));
  const branch = `retry-${digest(taskId, key, String(seconds)).slice(0, 12)}`;
  const claim = await store.idempotency.claim(
    retryIdempotencyKey(tenant, taskId, key),
    { body_hash: bodyHash, branch },
    seconds,
  );
  if (claim.claimed) return branch;
  // Released between the two (a retry that made nothing): claim it afresh.
  if (!claim.held) return claimRetryKey(store, tenant, taskId, key, body, now);
  if (claim.held.body_hash !== bodyHash) throw reused(key, taskId);
  return branchOf(claim.held, taskId, key);
}

/** Lets the key go again after a retry that made nothing. */
export async function releaseRetryKey(
  store: TaskStore,
  tenant: string,
  taskId: string,
  key: string,
): Promise<void> {
  await store.idempotency.release(retryIdempotencyKey(tenant, taskId, key));
}
