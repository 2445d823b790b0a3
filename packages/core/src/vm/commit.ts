/**
 * The two writes of a step (`vm/step.ts`): the commit, then the head move.
 *
 * - The commit key is derived from (task, branch, parent): a racing or repeated
 *   step finds the commit written (`ConflictError`) and takes *that* commit
 *   (`repaired`), which also repairs a crash between the commit write and the
 *   head move.
 * - A commit the store refuses would be refused on every try
 *   (`record-bounds.ts`): a small error commit takes its place at once.
 * - The head moves only from the expected parent (a conditional update); the
 *   same update counts the step's usage and clears what the commit ends (a wait,
 *   a retry record, a group's mark: `groupMarkChanges`).
 */
import { isErrorKind, type StepError } from "../errors";
import type { LlmCall } from "../model";
import type { Changes } from "../ports/item-store";
import { commitId, commitSk, sweepIndex } from "../store/keys";
import type { BranchRecord, CommitRecord } from "../store/records";
import { ATTRIBUTE_LIMIT, spillRecord, spillValue, taskBlobPrefix } from "../store/values";
import { nextChain } from "./fenwick";
import type { Draft } from "./pending";
import { boundCommit, isStoreRefusal, refusalFailure } from "./record-bounds";
import { countsAsStep } from "./step-count";
import type { StepDeps } from "./step-deps";
import { nextWindow } from "./variables";

/** The commit after the branch's head, from the step's draft, its LLM calls and its time. */
export async function buildCommit(
  deps: StepDeps,
  branch: BranchRecord,
  draft: Draft,
  calls: LlmCall[],
  durationMs: number,
): Promise<CommitRecord> {
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const spill = async <T>(value: T) =>
    (await spillValue(value, deps.blobs, prefix, ATTRIBUTE_LIMIT)) as T;
  const depth = branch.head === null ? 0 : branch.depth + 1;
  const id = commitId(branch.bid, depth);
  const outputs = draft.outputs_stored
    ? draft.outputs
    : await spillRecord(draft.outputs, deps.blobs, prefix);
  // The window names where each variable set in its range lives (`fenwick.ts`,
  // `variables.ts`); values kept in windows from before issue 22 go in as values.
  const { window, window_ids: windowIds } =
    branch.head === null ? {} : await nextWindow(deps.store, deps.blobs, branch, depth, outputs);
  const final = draft.final_answer === undefined ? {} : { final_answer: outputs.final_answer };
  const record: CommitRecord = {
    pk: branch.pk,
    sk: commitSk(branch.bid, depth),
    commit_id: id,
    parent_id: branch.head,
    branch: branch.name,
    bid: branch.bid,
    depth,
    type: draft.type,
    seq_no: draft.seq_no,
    instruction: await spill(draft.instruction),
    inputs: await spill(draft.inputs),
    outputs,
    ...(window === undefined ? {} : { window: await spill(window) }),
    ...(windowIds === undefined ? {} : { window_ids: await spill(windowIds) }),
    chain: branch.head === null ? [] : nextChain(branch.head, branch.depth, branch.chain),
    ...(draft.plan ? { plan: draft.plan } : {}),
    plan_commit: draft.plan ? id : branch.plan_commit,
    pc_before: branch.pc,
    pc_after: draft.pc_after,
    error: draft.error,
    llm_calls: calls,
    duration_ms: durationMs,
    ...(draft.details ? { details: draft.details } : {}),
    status_after: draft.status_after,
    pending_after: draft.pending_after,
    updates_after: draft.updates_after,
    ...final,
    created_at: new Date(deps.clock.now()).toISOString(),
  };
  return boundCommit(record, deps.blobs, prefix);
}

/** The commit as written, and whether this step wrote it or found it written. */
export interface Written {
  commit: CommitRecord;
  outcome: "committed" | "repaired";
}

/**
 * Writes the step's commit. `failed` builds the error commit that takes the
 * place of one the store refuses (`refusalFailure` says what was too big).
 */
export async function writeCommit(
  deps: StepDeps,
  branch: BranchRecord,
  commit: CommitRecord,
  failed: (failure: StepError) => Promise<CommitRecord>,
  /** The queue's id of the message, carried into the log line. */
  messageId?: string,
): Promise<Written> {
  try {
    return await putOrTake(deps, branch, commit);
  } catch (error) {
    // A value the store cannot hold is refused at its boundary (`StoreRefusedError`,
    // `TaskStore.putCommit`): a `TypeError` here is a bug, and the message is retried.
    if (!isStoreRefusal(error)) throw error;
    // The same commit would be refused on every try (`record-bounds.ts`): the step
    // fails now, with a small error commit in its place.
    const failure = refusalFailure(error, commit);
    deps.log.warn("the store refused a step's commit: the step fails", {
      ...(messageId ? { message_id: messageId } : {}),
      tenant_id: branch.tenant_id,
      task_id: branch.task_id,
      branch: branch.name,
      parent: branch.head,
      error: failure.message,
    });
    // A redelivery after the error commit was written (the worker died before the
    // head move): the store checks size before the condition, so the step commit is
    // refused again and its error commit finds its key taken. Take the one written.
    return putOrTake(deps, branch, await failed(failure));
  }
}

/** Puts the commit; one already at its key (a repeat, a racing worker) is taken instead. */
async function putOrTake(
  deps: StepDeps,
  branch: BranchRecord,
  commit: CommitRecord,
): Promise<Written> {
  try {
    await deps.store.putCommit(commit);
    return { commit, outcome: "committed" };
  } catch (error) {
    if (!isErrorKind(error, "conflict")) throw error;
    const existing = await deps.store.getCommit(branch.tenant_id, branch.task_id, commit.commit_id);
    if (!existing) throw error;
    return { commit: existing, outcome: "repaired" };
  }
}

/** Moves the branch head to the commit; null when another worker moved it first. */
export async function moveHead(
  deps: StepDeps,
  branch: BranchRecord,
  commit: CommitRecord,
): Promise<BranchRecord | null> {
  const set: Array<[string[], unknown]> = [
    [["head"], commit.commit_id],
    [["prev_head"], commit.parent_id],
    [["depth"], commit.depth],
    [["pc"], commit.pc_after],
    [["chain"], commit.chain],
    [["status"], commit.status_after],
    [["pending"], commit.pending_after ?? null],
    [["updates"], commit.updates_after ?? branch.updates],
    [["updated_at"], commit.created_at],
  ];
  // The plan stays on its commit (once per plan version); the branch names it.
  if (commit.plan) set.push([["plan_commit"], commit.commit_id]);
  // The wait this commit ends (`vm/wait.ts`); ordinary steps write nothing more.
  if (branch.waiting) set.push([["waiting"], null]);
  // The failures this commit ends (`vm/retrying.ts`): written only after one.
  if (branch.retrying) set.push([["retrying"], null]);
  // Set by the step that completes; an evaluation commit after it keeps the answer.
  if (commit.final_answer !== undefined) set.push([["final_answer"], commit.final_answer]);
  if (commit.type === "evaluation") set.push([["verdict"], commit.details?.verdict ?? null]);
  if (commit.status_after === "failed") {
    set.push([["error"], (commit.error as { message?: string } | null)?.message ?? "failed"]);
  }
  const running = commit.status_after === "running";
  // The index entry is written once, when the branch starts running (and only here if
  // it is missing): changing index keys on every step would write the index each time.
  if (running && !branch.gsi1pk) set.push(...sweepIndex(branch, commit.created_at));
  const calls = commit.llm_calls;
  const group = groupMarkChanges(branch, commit);
  set.push(...group.set);
  const remove = [
    ...(running ? [] : [["gsi1pk"], ["gsi1sk"]]),
    // A task created with a plan has it on its branch until the plan's commit.
    ...(commit.plan ? [["plan"]] : []),
    ...group.remove,
  ];
  const changes: Changes = {
    set,
    ...(remove.length > 0 ? { remove } : {}),
    add: [
      [["usage", "steps"], countsAsStep(branch, commit) ? 1 : 0],
      [["usage", "llm_calls"], calls.length],
      [["usage", "input_tokens"], calls.reduce((n, c) => n + c.input_tokens, 0)],
      [["usage", "output_tokens"], calls.reduce((n, c) => n + c.output_tokens, 0)],
      [["usage", "cost_usd"], calls.reduce((n, c) => n + c.cost_usd, 0)],
    ],
  };
  try {
    return await deps.store.advanceBranch(
      branch.tenant_id,
      branch.task_id,
      branch.name,
      branch.head,
      changes,
      branch,
    );
  } catch (error) {
    if (isErrorKind(error, "conflict")) return null;
    throw error;
  }
}

/**
 * What a commit changes of the branch's parallel group mark (`vm/group.ts`): the
 * commit that leaves the group removes it and leaves `group_joined` (the base),
 * so that a join message redelivered after a crash before the next enqueue
 * resumes the branch (`joinedAt`); the next commit removes that.
 */
function groupMarkChanges(
  branch: BranchRecord,
  commit: CommitRecord,
): { set: Array<[string[], unknown]>; remove: string[][] } {
  const joined = branch.group_joined ? [["group_joined"]] : [];
  if (!branch.group) return { set: [], remove: joined };
  const stays =
    commit.type === "step" &&
    commit.status_after === "running" &&
    commit.pc_after !== null &&
    branch.group.members.includes(commit.pc_after) &&
    commit.pc_after !== branch.group.members[0];
  if (stays) return { set: [], remove: [] };
  return { set: [[["group_joined"], branch.group.base]], remove: [["group"], ["group_base"]] };
}
