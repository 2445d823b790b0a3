/**
 * How a step marks its branch before work that spans invocations (a group's
 * fan-out, a wait): one conditional update that holds only while the branch is
 * as the step read it (head unchanged, still running, no cancel asked for),
 * then a log line naming the branch. A branch that changed meanwhile is left
 * alone and the message comes back (a `RetryableError`), so that whatever
 * changed it (a cancel, another worker) is seen by the retry.
 */
import { RetryableError } from "../errors";
import type { BranchRecord } from "../store/records";
import type { StepDeps } from "./step-deps";

export interface BranchMark {
  /** The fields to set; `updated_at` is set with them. */
  set: Array<[string[], unknown]>;
  /** More fields the branch must hold, beside head, status and cancel. */
  also?: Record<string, unknown>;
  /** The retry's code and message when the branch changed. */
  raced: { code: string; message: string };
  /** The log line and its fields beside the branch's identity. */
  log: { message: string; fields: Record<string, unknown> };
}

export async function markBranch(
  deps: Pick<StepDeps, "store" | "clock" | "log">,
  branch: BranchRecord,
  mark: BranchMark,
): Promise<BranchRecord> {
  const now = new Date(deps.clock.now()).toISOString();
  let marked: BranchRecord;
  try {
    marked = await deps.store.updateBranch(
      branch.tenant_id,
      branch.task_id,
      branch.name,
      { set: [...mark.set, [["updated_at"], now]] },
      {
        exists: true,
        equals: { head: branch.head, status: "running", cancel_requested: false, ...mark.also },
      },
    );
  } catch (error) {
    throw new RetryableError(mark.raced.code, mark.raced.message, undefined, error);
  }
  deps.log.info(mark.log.message, {
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    ...mark.log.fields,
  });
  return marked;
}
