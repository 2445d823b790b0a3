/**
 * Idempotency-Key for starting tasks: the same key with the same body within 24
 * hours answers the first task; with another body, 409 `idempotency_key_reused`.
 */
import { ConflictError } from "../errors";
import { digest } from "../ids";
import type { Clock } from "../ports/clock";
import { idempotencyKey } from "../store/keys";
import type { TaskStore } from "../store/task-store";
import { stableJson } from "./stable-json";
import type { CreateTaskInput } from "./task-input";

/** Records the key for this task, or answers the task that already holds it. */
export async function claimIdempotencyKey(
  deps: { store: TaskStore; clock: Clock },
  tenant: string,
  key: string,
  input: CreateTaskInput,
  taskId: string,
): Promise<string> {
  const bodyHash = digest(stableJson(input));
  const claim = await deps.store.idempotency.claim(
    idempotencyKey(tenant, key),
    { task_id: taskId, body_hash: bodyHash },
    Math.floor(deps.clock.now() / 1000),
  );
  if (claim.claimed) return taskId;
  if (!claim.held) throw claim.conflict;
  if (claim.held.body_hash !== bodyHash) {
    throw new ConflictError(
      `the Idempotency-Key '${key}' was used with a different body within 24 hours: use a new key for a new task`,
      "idempotency_key_reused",
    );
  }
  return claim.held.task_id as string;
}
