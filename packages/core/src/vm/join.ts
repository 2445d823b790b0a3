/**
 * The join of a complete parallel group (`vm/group.ts`): the step after the
 * group's base commits each member's held result (`store/held-result-store.ts`)
 * in plan order, one linear commit per member, through the step's commit tail
 * (`vm/commit-tail.ts`), in a loop in one invocation. Each commit is keyed by
 * its parent and moves the head from it, as any step's: a joiner that dies
 * between two commits is followed by its redelivered message, which goes on
 * from the head (`joinedAt`), and two joiners at once conflict as two workers
 * on one step.
 *
 * A member that failed is held as its error: its commit is the `error` commit of
 * an ordinary failed step (plan update or the end of the branch), which leaves
 * the group; the results after it are never committed, but their LLM calls are
 * recorded on that commit.
 */
import { RetryableError, StackVMError } from "../errors";
import type { LlmCall } from "../model";
import type { HeldResult } from "../store/held-result-store";
import type { BranchRecord, GroupRecord } from "../store/records";
import { commitStep, type StepWork } from "./commit-tail";
import { draftForFailure } from "./decide";
import { enqueueJoin } from "./enqueue";
import { findInstruction } from "./execute";
import { joins } from "./group-mark";
import type { Draft } from "./pending";
import { carriedCalls } from "./retrying";
import type { StepDeps } from "./step-deps";
import type { StepOutcome } from "./step-outcome";

type Joining = BranchRecord & { group: GroupRecord };

/**
 * Commits the held results of the branch's complete group from its PC on, one
 * commit each, until the group is left; answers the last commit's outcome.
 */
export async function joinGroup(
  deps: StepDeps,
  branch: Joining,
  messageId?: string,
): Promise<StepOutcome> {
  let at: BranchRecord = branch;
  for (;;) {
    const work = await heldWork(deps, at as Joining);
    const {
      outcome,
      branch: moved,
      joinGoesOn,
    } = await commitStep(deps, at, work, messageId, true);
    // Another worker moved the head, or the group is left (the next step is enqueued).
    if (!moved || !joinGoesOn) return outcome;
    at = moved;
  }
}

/**
 * The join right after the last member held its result (`vm/member.ts`, the
 * fan-out), from the branch as the member's done mark left it (no read more),
 * saving a queue hop; a branch that is no longer at the group's base, running
 * and complete gets the join message instead, which takes the step's whole path.
 */
export async function joinAfterMembers(
  deps: StepDeps,
  branch: BranchRecord,
  base: string,
  messageId?: string,
): Promise<void> {
  if (branch.head === base && branch.status === "running" && joins(branch)) {
    await joinGroup(deps, branch, messageId);
    return;
  }
  await enqueueJoin(deps, branch, base);
}

/** What the step commits for the member at the PC: its held result as a draft, or its error's. */
async function heldWork(deps: StepDeps, branch: Joining): Promise<StepWork> {
  const seq = branch.pc as number;
  const item = await deps.held.get(branch, branch.group.base, seq);
  if (!item) {
    throw new RetryableError("group_result_missing", `the held result of member ${seq} is missing`);
  }
  const group = {
    base: branch.group.base,
    members: branch.group.members,
    started_at: item.started_at,
    finished_at: item.finished_at,
  };
  const error = heldError(item, group);
  const draft = error ? draftForFailure(deps, branch, error) : heldDraft(branch, item, group);
  // The members after a failed one are never committed: their calls were made
  // all the same, so the failed member's commit records them (and `usage` counts them).
  const calls = error
    ? [...item.llm_calls, ...(await laterCalls(deps, branch, seq))]
    : item.llm_calls;
  // The calls of earlier deliveries that failed come first: every call made is in a commit.
  return { draft, calls: [...carriedCalls(branch), ...calls], durationMs: item.duration_ms };
}

/** The draft of a member's held result: the step commit its instruction would have made. */
function heldDraft(branch: Joining, item: HeldResult, group: Record<string, unknown>): Draft {
  const seq = item.seq_no;
  const ranPastEnd = item.error === null && item.pc_after === null;
  return {
    type: "step",
    seq_no: seq,
    instruction: findInstruction(branch.plan ?? [], seq),
    inputs: item.inputs,
    outputs: item.outputs,
    outputs_stored: true,
    pc_after: item.pc_after,
    status_after: ranPastEnd ? "failed" : "running",
    error: ranPastEnd
      ? {
          code: "no_final_answer",
          message: `execution ran past the end of the plan (after seq_no ${seq}) without setting final_answer`,
        }
      : null,
    pending_after: null,
    updates_after: branch.updates,
    details: { ...(item.details ?? {}), group },
  };
}

/** A failed member's error, as the step records its own (`draftForFailure`). */
function heldError(item: HeldResult, group: Record<string, unknown>): StackVMError | null {
  if (!item.error) return null;
  return new StackVMError(item.error.kind as never, item.error.code, item.error.message, {
    details: { ...((item.error.details as object | undefined) ?? {}), group },
  });
}

/** The LLM calls held by the members after `seq` in the branch's group. */
async function laterCalls(deps: StepDeps, branch: Joining, seq: number): Promise<LlmCall[]> {
  const later = branch.group.members.slice(branch.group.members.indexOf(seq) + 1);
  const held = await deps.held.list(branch, branch.group.base, later);
  return held.flatMap((item) => item?.llm_calls ?? []);
}
