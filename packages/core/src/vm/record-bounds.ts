/**
 * Every commit fits the store, whatever the step did, and a commit the store
 * refuses anyway fails its step at once instead of being retried.
 *
 * A commit's parts are bounded one by one (`store/values.ts`: the values a step
 * sets stay inline up to 64 KiB together, the rest are references to the blob
 * store; an instruction, inputs or a window over 128 KiB is stored whole in the
 * blob store). Together they could still pass DynamoDB's 400 KB an item, so
 * `boundCommit` moves the largest of the parts that may live in the blob store
 * there until the commit is within {@link COMMIT_BYTES}.
 *
 * A refusal by the store (a record over its limit, a value it cannot hold) is
 * the same on every try: `refusalFailure` turns it into a step error that says
 * what was too big and what to do, so that the step's `error` commit, the plan
 * update or the end of the branch, the event and the webhook follow at once.
 */
import { isErrorKind, type StackVMError, StepError } from "../errors";
import type { Blobs } from "../ports/blobs";
import { itemSize, MAX_ITEM_BYTES } from "../store/item-rules";
import type { BranchRecord, CommitRecord } from "../store/records";
import { isStoredRef, spillValue } from "../store/values";
import type { StepRef } from "./message";
import type { StepDeps } from "./step-deps";

/** What a commit may weigh in the store, with room under the 400 KB item limit. */
export const COMMIT_BYTES = 350 * 1024;

/** The parts of a commit that may live in the blob store, most readily first. */
const SPILLABLE = ["inputs", "window", "window_ids", "instruction", "details"] as const;

/**
 * The commit, with its largest spillable parts moved to the blob store until it
 * weighs at most {@link COMMIT_BYTES} (as the store measures an item).
 */
export async function boundCommit(
  commit: CommitRecord,
  blobs: Blobs,
  prefix: string,
): Promise<CommitRecord> {
  let size = itemSize(commit as unknown as Record<string, unknown>);
  if (size <= COMMIT_BYTES) return commit;
  const bounded: Record<string, unknown> = { ...commit };
  const parts = SPILLABLE.filter((name) => bounded[name] != null && !isStoredRef(bounded[name]))
    .map((name) => ({ name, size: itemSize({ [name]: bounded[name] }) }))
    .sort((a, b) => b.size - a.size);
  for (const part of parts) {
    if (size <= COMMIT_BYTES) break;
    bounded[part.name] = await spillValue(bounded[part.name], blobs, prefix, 0);
    size = itemSize(bounded);
  }
  return bounded as unknown as CommitRecord;
}

/** True for a refusal by the store that the same write would meet again. */
export function isStoreRefusal(error: unknown): boolean {
  if (isErrorKind(error, "too_large")) return true;
  if ((error as StackVMError | null)?.code === "store_refused") return true;
  // DynamoDB's refusal of an item or expression it cannot take.
  return (error as { name?: unknown } | null)?.name === "ValidationException";
}

/** The parts of a commit by size in the store, largest first: what the message names. */
function largestParts(commit: CommitRecord): string {
  return Object.entries(commit)
    .map(([name, value]) => ({ name, size: itemSize({ [name]: value }) }))
    .sort((a, b) => b.size - a.size)
    .slice(0, 3)
    .map((p) => `${p.name} ${p.size} bytes`)
    .join(", ");
}

/**
 * The step error a store refusal of the step's commit becomes: it names the
 * commit's size and largest parts and what to do. A plan update may avoid it
 * (fewer or smaller values in one step), so it takes the plan's error path.
 */
export function refusalFailure(error: unknown, commit: CommitRecord): StepError {
  const size = itemSize(commit as unknown as Record<string, unknown>);
  const what = (error as Error | null)?.message ?? String(error);
  const tooLarge = isErrorKind(error, "too_large") || size > MAX_ITEM_BYTES;
  return new StepError(
    tooLarge ? "record_too_large" : "record_refused",
    tooLarge
      ? `the step's commit would be ${size} bytes, over the store's limit of ${MAX_ITEM_BYTES} bytes (largest parts: ${largestParts(commit)}): ${what}. Make the step produce less at once: fewer or smaller output variables, a shorter instruction, or split the work over several steps.`
      : `the store refused the step's commit: ${what}. Change the step so that its values are plain JSON the store can hold (see docs/plan-language.md, limits), then retry the task.`,
    { bytes: size, limit: MAX_ITEM_BYTES, parts: largestParts(commit) },
    error,
  );
}

/**
 * Ends a branch whose step the store refused outside its commit (the head move):
 * `failed` with the refusal as its error, at once, and the terminal hooks (task
 * status, event, webhook). Only while its head is still the message's.
 */
export async function failRefusedStep(
  deps: Pick<StepDeps, "store" | "clock" | "onTerminal">,
  message: StepRef,
  error: unknown,
): Promise<BranchRecord | null> {
  const what = (error as Error | null)?.message ?? String(error);
  const reason = `the store refused the step after ${message.head ?? "the start"}: ${what}. The same write would be refused again, so the step was not retried; make the step produce less at once (fewer or smaller output variables), then retry the task.`;
  const branch = await deps.store
    .updateBranch(
      message.tenant_id,
      message.task_id,
      message.branch,
      {
        set: [
          [["status"], "failed"],
          [["error"], reason],
          [["updated_at"], new Date(deps.clock.now()).toISOString()],
        ],
      },
      { exists: true, equals: { head: message.head } },
    )
    .catch((failure: unknown) => {
      if (isErrorKind(failure, "conflict")) return null;
      throw failure;
    });
  if (branch && deps.onTerminal) await deps.onTerminal(branch);
  return branch;
}
