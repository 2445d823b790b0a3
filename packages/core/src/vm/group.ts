/**
 * Parallel groups (plan language 1.1, `plan/groups.ts` finds them): the members of
 * a group run at once, each in its own invocation, and still commit one by one,
 * in plan order, as ordinary linear commits.
 *
 * 1. **Fan-out.** The step after `head` (the group's *base*) finds that the PC
 *    starts a group run (`groupRunAt`, at most the namespace's `parallel_width`).
 *    It marks the branch with one conditional update (`group`, `group_base`:
 *    head unchanged, no group yet), sends one member message per other member
 *    (`StepMessage.member`, each in a message group of its own, deduplicated by
 *    (task, branch, base, member)) and runs the first member itself.
 * 2. **Members.** A member runs its instruction against the variables at the
 *    base (members do not read each other's outputs), writes its result apart
 *    (`G#{bid}#{base}#{seq_no}`, `exists: false`: a member run twice keeps the
 *    first result) and marks itself done on the branch (`group.done.{seq}`,
 *    conditional on `group_base`). The member that sees every member done runs
 *    the *join* itself (the step after the base, in its invocation); should it
 *    die, its redelivered message sends the join as a step message for the base.
 * 3. **Join.** Each step whose PC is a member of the complete group takes that
 *    member's held result instead of running it (`takeHeld`) and commits it
 *    through the ordinary path (commit keyed by its parent, head moved from the
 *    parent), then goes on to the next member in the same invocation. Each
 *    commit is written once; a joiner that dies between two commits is
 *    followed by its redelivered message, which goes on from the head
 *    (`joinedAt`), and two joiners at once conflict as two workers on one step.
 *    The commit that leaves the group clears the mark (`groupExit`) and the
 *    step after the group is enqueued as usual.
 *
 * A member that failed is held as its error: the members before it commit, and
 * its commit is the `error` commit of an ordinary failed step (plan update or
 * the end of the branch); the results after it are never committed. A forked
 * branch has no mark: from a commit inside a group it runs the rest of the group
 * (from its PC on) as a group of its own, so nothing before the fork runs again.
 * Ordinary steps pay nothing for this: `takeHeld` reads only when the branch is
 * marked, and the fan-out check is computed from the plan in memory.
 */
import { isErrorKind, RetryableError, StackVMError } from "../errors";
import type { LlmCall } from "../model";
import { DEFAULT_GROUP_WIDTH, groupRunAt } from "../plan/groups";
import { groupHeldKey } from "../store/keys";
import type { BranchRecord, CommitRecord, GroupRecord } from "../store/records";
import { markBranch } from "./branch-mark";
import { enqueueJoin, enqueueMember } from "./enqueue";
import { findInstruction } from "./execute";
import { type HeldResult, type MemberRunner, runHeld } from "./group-held";
import type { StepMessage } from "./message";
import type { Draft } from "./pending";
import type { StepDeps } from "./step-deps";

/** Commits the complete group's held results now: the step after its base, in this invocation. */
export type Joiner = (base: string) => Promise<unknown>;

/** What the step commits for a member of a complete group. */
export interface Held {
  draft: Draft;
  calls: LlmCall[];
  durationMs: number;
  /** The member failed: the step records this error as it would its own. */
  error: StackVMError | null;
}

/** The width of a branch's groups: the namespace's `parallel_width`, else 4. */
export function groupWidth(branch: BranchRecord): number {
  return branch.config.namespace.parallel_width ?? DEFAULT_GROUP_WIDTH;
}

const allDone = (group: GroupRecord): boolean =>
  group.members.every((m) => group.done[String(m)] === true);

/** True when the branch's PC is a member of its running group. */
const inGroup = (branch: BranchRecord): branch is BranchRecord & { group: GroupRecord } =>
  !!branch.group && branch.pc !== null && branch.group.members.includes(branch.pc);

/**
 * Hook of the step: for a branch whose group is complete, the held result of
 * the member at the PC, to commit instead of running it; else null.
 */
export async function takeHeld(deps: StepDeps, branch: BranchRecord): Promise<Held | null> {
  if (!inGroup(branch) || branch.cancel_requested || branch.pending || !branch.plan) return null;
  if (!allDone(branch.group)) return null;
  const seq = branch.pc as number;
  const item = (await deps.store.items.get(
    groupHeldKey(branch, branch.group.base, seq),
  )) as unknown as HeldResult | null;
  if (!item) {
    throw new RetryableError("group_result_missing", `the held result of member ${seq} is missing`);
  }
  const instruction = findInstruction(branch.plan, seq);
  const group = {
    base: branch.group.base,
    members: branch.group.members,
    started_at: item.started_at,
    finished_at: item.finished_at,
  };
  const ranPastEnd = item.error === null && item.pc_after === null;
  const draft: Draft = {
    type: "step",
    seq_no: seq,
    instruction,
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
  const error = item.error
    ? new StackVMError(item.error.kind as never, item.error.code, item.error.message, {
        details: { ...((item.error.details as object | undefined) ?? {}), group },
      })
    : null;
  // The members after a failed one are never committed: their calls were made
  // all the same, so the failed member's commit records them (and `usage` counts them).
  const calls = error
    ? [...item.llm_calls, ...(await laterCalls(deps, branch, seq))]
    : item.llm_calls;
  return { draft, calls, durationMs: item.duration_ms, error };
}

/** The LLM calls held by the members after `seq` in the branch's group. */
async function laterCalls(
  deps: StepDeps,
  branch: BranchRecord & { group: GroupRecord },
  seq: number,
): Promise<LlmCall[]> {
  const later = branch.group.members.slice(branch.group.members.indexOf(seq) + 1);
  const items = await Promise.all(
    later.map((m) => deps.store.items.get(groupHeldKey(branch, branch.group.base, m))),
  );
  return items.flatMap((item) => (item as unknown as HeldResult | null)?.llm_calls ?? []);
}

/**
 * Hook of the step: starts the group that begins at the PC (or goes on with one
 * that is not complete). `{ outcome: "grouped" }` when it did; null for an
 * ordinary step.
 */
export async function runGroup(
  deps: StepDeps,
  branch: BranchRecord,
  runner: MemberRunner,
  join: Joiner,
): Promise<{ outcome: "grouped" } | null> {
  if (branch.cancel_requested || branch.pending || branch.head === null) return null;
  if (branch.pc === null || !branch.plan) return null;
  if (branch.group) {
    if (!inGroup(branch)) return null;
    // Redelivered, or sent by the sweep: send the members that are not done again.
    await fanOut(deps, branch, null, join);
    return { outcome: "grouped" };
  }
  // Computed only for a calling: assign, jmp and other steps pay nothing.
  const at = branch.plan.find((i) => i.seq_no === branch.pc);
  if (at?.type !== "calling") return null;
  const run = groupRunAt(branch.plan, branch.pc, groupWidth(branch));
  if (!run) return null;
  if (branch.usage.steps + run.length > branch.config.budget.max_steps) return null;
  const now = new Date(deps.clock.now()).toISOString();
  const group: GroupRecord = { base: branch.head, members: run, done: {}, started_at: now };
  const marked = await markBranch(deps, branch, {
    set: [
      [["group"], group],
      [["group_base"], branch.head],
    ],
    also: { group_base: null },
    raced: { code: "group_raced", message: "the branch changed as its group began" },
    log: { message: "group started", fields: { parent: branch.head, members: run } },
  });
  await fanOut(deps, marked, runner, join);
  return { outcome: "grouped" };
}

/**
 * Sends a member message for each member not done; with a runner, runs the
 * first one here (the invocation that started the group runs one member too).
 */
async function fanOut(
  deps: StepDeps,
  branch: BranchRecord & { group?: GroupRecord | null },
  runner: MemberRunner | null,
  join: Joiner,
): Promise<void> {
  const group = branch.group as GroupRecord;
  const waiting = group.members.filter((m) => group.done[String(m)] !== true);
  if (waiting.length === 0) {
    await enqueueJoin(deps, branch, group.base);
    return;
  }
  const here = runner ? waiting[0] : undefined;
  await Promise.all(
    waiting.filter((m) => m !== here).map((seq) => enqueueMember(deps, branch, group.base, seq)),
  );
  if (runner && here !== undefined) await runMemberOf(deps, branch, here, runner, join);
}

/** Handles a member message (`StepMessage.member`). */
export async function runMember(
  deps: StepDeps,
  message: StepMessage & { member: number },
  runner: MemberRunner,
  join: Joiner,
): Promise<{ outcome: "member" | "duplicate" | "gone" }> {
  const branch = await deps.store.getBranch(message.tenant_id, message.task_id, message.branch);
  if (!branch) return { outcome: "gone" };
  const group = branch.group;
  if (!group || group.base !== message.head || !group.members.includes(message.member)) {
    return { outcome: "duplicate" };
  }
  if (group.done[String(message.member)] === true) {
    // Done before: its worker may have died before the join was sent (deduplicated).
    if (allDone(group)) await enqueueJoin(deps, branch, group.base);
    return { outcome: "duplicate" };
  }
  await runMemberOf(deps, branch, message.member, runner, join);
  return { outcome: "member" };
}

/** Runs one member (unless its result is held already), holds the result, marks it done. */
async function runMemberOf(
  deps: StepDeps,
  branch: BranchRecord,
  seq: number,
  runner: MemberRunner,
  join: Joiner,
): Promise<void> {
  const group = branch.group as GroupRecord;
  const key = groupHeldKey(branch, group.base, seq);
  // A cancel asked for: the member is done without running; the join commits the cancel.
  const skip = branch.cancel_requested || branch.status !== "running";
  if (!skip && !(await deps.store.items.get(key))) {
    const result = await runHeld(deps, branch, seq, runner);
    try {
      await deps.store.items.put({ ...key, ...result }, { exists: false });
    } catch (error) {
      // Another delivery of this member held its result first: that one is committed.
      if (!isErrorKind(error, "conflict")) throw error;
    }
  }
  let marked: BranchRecord;
  try {
    marked = await deps.store.updateBranch(
      branch.tenant_id,
      branch.task_id,
      branch.name,
      { set: [[["group", "done", String(seq)], true]] },
      { exists: true, equals: { group_base: group.base } },
    );
  } catch (error) {
    if (isErrorKind(error, "conflict")) return;
    throw error;
  }
  deps.log.info("group member held", {
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    parent: group.base,
    member: seq,
  });
  // The last member joins here, saving a queue hop; should it die, its message comes
  // back, finds itself done and sends the join (`runMember`).
  if (marked.group && allDone(marked.group)) await join(group.base);
}

/**
 * Hook of `moveHead`: what a commit changes of the group's mark. The commit that
 * leaves the group removes it and leaves `group_joined` (the base), so that a
 * join message redelivered after a crash before the next enqueue resumes the
 * branch (`joinedAt`); the next commit removes that.
 */
export function groupExit(
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

/**
 * For a step message whose head is not the branch's: "go on" when it is the join
 * of the branch's complete group and the joiner died between two member commits
 * (the commits go on from the head), "resume" when that group's last commit is
 * written and its enqueue may be lost; else null.
 */
export function joinedAt(branch: BranchRecord, head: string | null): "go_on" | "resume" | null {
  if (head === null || branch.head === null) return null;
  if (branch.group?.base === head && inGroup(branch) && allDone(branch.group)) return "go_on";
  if (branch.group_joined === head) return "resume";
  return null;
}

/** True when the step after this commit takes the next held result of its group. */
export const joinContinues = (branch: BranchRecord): boolean =>
  branch.status === "running" &&
  inGroup(branch) &&
  allDone(branch.group) &&
  !branch.cancel_requested;
