/**
 * A step message that kept failing ends its branch `failed`, so that no branch is
 * left `running` forever. The DLQ consumer does it on AWS and locally
 * (`functions/dlq-handler.ts`); the in-memory system does it after a drain.
 */
import { isErrorKind } from "../errors";
import type { BranchRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { StepRef } from "./message";

/** What a dead-lettered step's branch says: the step, the deliveries, the last error and the fix. */
export function deadLetterReason(
  m: StepRef,
  receives: number | string,
  lastError?: string,
): string {
  const cause = lastError ? `; last error: ${lastError}` : "";
  return `the step after ${m.head ?? "the start"} kept failing and was moved to the dead-letter queue (received ${receives} times)${cause}. Retry the task: POST /v1/tasks/${m.task_id}/retry (or stackvm retry ${m.task_id})`;
}

/**
 * Marks the message's branch `failed` with the reason, only if its head has not
 * moved since the message was sent (a later step already went on). Answers the
 * branch as written, or null when the head had moved.
 */
export async function endDeadLetteredBranch(
  store: TaskStore,
  m: StepRef,
  reason: string,
  now: number,
): Promise<BranchRecord | null> {
  return store
    .updateBranch(
      m.tenant_id,
      m.task_id,
      m.branch,
      {
        set: [
          [["status"], "failed"],
          [["error"], reason],
          [["updated_at"], new Date(now).toISOString()],
        ],
      },
      { exists: true, equals: { head: m.head } },
    )
    .catch((error: unknown) => {
      if (isErrorKind(error, "conflict")) return null;
      throw error;
    });
}
