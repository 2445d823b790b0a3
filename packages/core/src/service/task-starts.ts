/**
 * Starting a task is several writes (the task, its `main` branch, a running slot,
 * the first step's message), and DynamoDB's emulator has no transactions. So a
 * start is all or nothing by its order and a marker:
 *
 * 1. everything is checked before the first write (`task-sizes.ts`);
 * 2. a marker `T#{t}` / `START#{task}` is written (`store/task-starts.ts`), listed in the `gsi1` index
 *    `STARTS` by time, before anything that holds a resource;
 * 3. the task, its branch, the slot and the enqueue follow; a failure among them
 *    undoes what was written (`undoStart`) and the caller gets the error;
 * 4. the marker goes when the start is complete.
 *
 * A start cut short (a killed process) leaves its marker, and the sweep repairs
 * it once it is older than {@link START_REPAIR_AFTER_MS}: it finishes a start
 * whose task and branch exist (enqueues, or lists it as waiting), and removes
 * one whose task was never written (the slot is freed); a task written without
 * its branch fails with a message saying so. A client's retry with the same
 * Idempotency-Key finishes the start itself (`TaskService.create`).
 */
import { isErrorKind } from "../errors";
import type { Clock } from "../ports/clock";
import type { TaskStore } from "../store/task-store";

/**
 * A start older than this was cut short: no request lives longer (API Gateway
 * answers 504 after 29 s), so the sweep can repair it without racing the start.
 */
export const START_REPAIR_AFTER_MS = 30_000;

/**
 * Fails a task that was written without its `main` branch (a start cut short
 * before the branch write): it would otherwise stay `queued` for good. Only a
 * task still `queued` is changed.
 */
export async function failUnstarted(
  store: TaskStore,
  clock: Clock,
  tenant: string,
  taskId: string,
): Promise<void> {
  await store
    .updateTask(
      tenant,
      taskId,
      {
        status: "failed",
        error:
          "the task was not started: the service stopped while creating it, before its first step was written; create it again",
        updated_at: new Date(clock.now()).toISOString(),
      },
      { exists: true, equals: { status: "queued" } },
    )
    .catch((error: unknown) => {
      if (!isErrorKind(error, "conflict")) throw error;
    });
}
