/**
 * The tail every step ends with, in one function: build the commit, write it
 * (a commit the store refuses becomes a small error commit: `vm/commit.ts`),
 * move the head, the hooks (`onCommit`, `onStart`, `onResume`, then
 * `onTerminal` for a branch that ended), the log line, and the enqueue of the
 * next step. An ordinary step goes through it once (`vm/step.ts`); the join of
 * a parallel group once per held result, in a loop (`vm/join.ts`).
 */
import type { LlmCall } from "../model";
import type { BranchRecord } from "../store/records";
import { buildCommit, moveHead, writeCommit } from "./commit";
import { draftForFailure } from "./decide";
import { enqueueNext } from "./enqueue";
import type { Draft } from "./pending";
import type { StepDeps } from "./step-deps";
import type { StepOutcome } from "./step-outcome";

/** What a step commits: its draft, every LLM call it made, and its time. */
export interface StepWork {
  draft: Draft;
  /** The calls of earlier deliveries that failed first (`carriedCalls`): every call made is in a commit. */
  calls: LlmCall[];
  durationMs: number;
}

/** The tail's outcome, and the branch as the head move left it (null when another worker moved it first). */
export interface Committed {
  outcome: StepOutcome;
  branch: BranchRecord | null;
  /** A join's commit that stays in the group: the join commits the next held result itself. */
  joinGoesOn: boolean;
}

/**
 * Commits the step's work after the branch's head. For a group's join
 * (`joining`), a commit that stays in the group (the head move kept its mark:
 * `vm/commit.ts`) enqueues nothing: the join commits the next held result.
 *
 * @example
 * const { outcome } = await commitStep(deps, branch, work, messageId);
 */
export async function commitStep(
  deps: StepDeps,
  branch: BranchRecord,
  work: StepWork,
  /** The queue's id of the message, carried into the step's log lines. */
  messageId?: string,
  joining = false,
): Promise<Committed> {
  const { calls, durationMs } = work;
  const commit = await buildCommit(deps, branch, work.draft, calls, durationMs);
  const failed = (failure: unknown) =>
    buildCommit(deps, branch, draftForFailure(deps, branch, failure), calls, durationMs);
  const { commit: written, outcome } = await writeCommit(deps, branch, commit, failed, messageId);
  const moved = await moveHead(deps, branch, written);
  if (!moved) return { outcome: { outcome: "duplicate" }, branch: null, joinGoesOn: false };
  deps.onCommit?.(written, moved);
  deps.log.info("step committed", {
    ...(messageId ? { message_id: messageId } : {}),
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    parent: branch.head,
    commit: written.commit_id,
    type: written.type,
    status: written.status_after,
    ...(written.error ? { error: written.error } : {}),
  });
  if (written.parent_id === null && deps.onStart) await deps.onStart(moved);
  if (branch.waiting && written.status_after === "running" && deps.onResume) {
    await deps.onResume(moved);
  }
  // The mark stays only on a running commit whose PC is the group's next member;
  // a cancel asked for meanwhile is the next step's to commit.
  const joinGoesOn =
    joining && moved.status === "running" && !!moved.group && !moved.cancel_requested;
  const committed = {
    outcome: { outcome, commit: written.commit_id, status: written.status_after },
    branch: moved,
    joinGoesOn,
  };
  if (joinGoesOn) return committed;
  if (written.status_after === "running") {
    await enqueueNext(deps, moved, written.commit_id);
  } else if (deps.onTerminal) {
    await deps.onTerminal(moved);
  }
  return committed;
}
