/**
 * What the worker does with a step that threw, decided here and not in the
 * worker: give up, hide the message until it is due, or retry it after a delay
 * written on the branch (`recordRetry`).
 *
 * - A store refusal would be refused on every try: the branch fails at once with
 *   its cause (`failRefusedStep`) and the message is done.
 * - A wake that came before its time (`wait_not_due`, `vm/wait.ts`) is the plan
 *   working, not a failure: logged at info, hidden until due, no retry record.
 * - Anything else the queue retries: the branch shows why it waits and when it is
 *   tried again (`retrying`), and the message comes back after that delay (or
 *   after the error's `Retry-After` when the record could not be written).
 */
import { failedStep } from "./failed-step";
import type { StepRef } from "./message";
import { failRefusedStep, isStoreRefusal } from "./record-bounds";
import { DEFAULT_LLM_UNREACHABLE_MS, recordRetry } from "./retrying";
import type { StepDeps } from "./step-deps";

/** The delivery of a step message, as the queue handed it to the worker. */
export interface StepDelivery {
  messageId: string;
  receiptHandle: string;
  /** How many times the queue has handed this message out (1 on the first delivery). */
  receives: number;
  /** The queue's maxReceiveCount: the delivery after which the message goes to the DLQ. */
  lastReceive: number;
}

/**
 * Handles a step's failure: `"done"` when the message is used up (the branch
 * failed with its cause), `"retry"` when it must come back (the worker reports
 * it failed; its visibility is set here).
 */
export async function afterStepFailure(
  deps: StepDeps,
  /** The step that failed: a member message's is the step after its group's base (`memberStep`). */
  message: StepRef,
  error: unknown,
  delivery: StepDelivery,
): Promise<"done" | "retry"> {
  const where = {
    message_id: delivery.messageId,
    tenant_id: message.tenant_id,
    task_id: message.task_id,
    branch: message.branch,
    parent: message.head,
    error: (error as Error).message,
  };
  if (isStoreRefusal(error)) {
    // The same write would be refused on every try: end the branch now, with its cause.
    deps.log.error("the store refused a step: the branch fails without retrying", where);
    await failRefusedStep(deps, message, error);
    return "done";
  }
  const failed = failedStep(error);
  if ((error as { code?: unknown }).code === "wait_not_due") {
    deps.log.info("wake early: hidden until due", where);
    if (failed.does === "retry" && failed.afterSeconds !== undefined) {
      await hideFor(deps, delivery, failed.afterSeconds);
    }
    return "retry";
  }
  deps.log.warn("step will be retried", where);
  // Failure path only: the branch shows why it waits and when it is tried again.
  const retrying = await recordRetry(
    deps,
    message,
    error,
    delivery.receives,
    delivery.lastReceive,
    deps.llmUnreachableMs ?? DEFAULT_LLM_UNREACHABLE_MS,
  ).catch((failure: unknown) => {
    deps.log.warn("could not record the retry on the branch", { error: String(failure) });
    return null;
  });
  const delay = retrying
    ? Math.max(0, Math.round((Date.parse(retrying.next_attempt_at) - deps.clock.now()) / 1000))
    : failed.does === "retry"
      ? failed.afterSeconds
      : undefined;
  if (delay !== undefined) await hideFor(deps, delivery, delay);
  return "retry";
}

/** Makes the message visible again after `seconds`; a failure to do so leaves the queue's own timeout. */
async function hideFor(deps: StepDeps, delivery: StepDelivery, seconds: number): Promise<void> {
  await deps.queue.retryAfter(delivery.receiptHandle, seconds).catch(() => undefined);
}
