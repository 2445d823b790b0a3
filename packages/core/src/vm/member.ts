/**
 * The member entry: a member message (`MemberMessage`, sent by a group's
 * fan-out, `vm/group.ts`) runs one member of a parallel group against the
 * variables at the group's base, holds its result apart (written once:
 * `store/held-result-store.ts`) and marks itself done on the branch
 * (`group.done.{seq}`, conditional on `group_base`). The member that sees every
 * member done runs the join itself (`vm/join.ts`); should it die, its
 * redelivered message finds itself done and sends the join as a step message
 * for the base.
 */
import { isErrorKind } from "../errors";
import type { BranchRecord, GroupRecord } from "../store/records";
import { memberRunner } from "./decide";
import { enqueueJoin } from "./enqueue";
import { type MemberRunner, runHeld } from "./group-held";
import { allDone } from "./group-mark";
import { joinAfterMembers } from "./join";
import type { MemberMessage } from "./message";
import type { StepDeps } from "./step-deps";

/**
 * Handles a member message: runs member `member` of the group after `base`
 * (unless its result is held already), and the join when it was the last.
 *
 * @example
 * if (message.kind === "member") await runMember(deps, message, record.messageId);
 */
export async function runMember(
  deps: StepDeps,
  message: MemberMessage,
  /** The queue's id of the message, carried into the join's log lines. */
  messageId?: string,
): Promise<{ outcome: "member" | "duplicate" | "gone" }> {
  const branch = await deps.store.getBranch(message.tenant_id, message.task_id, message.branch);
  if (!branch) return { outcome: "gone" };
  const group = branch.group;
  if (!group || group.base !== message.base || !group.members.includes(message.member)) {
    return { outcome: "duplicate" };
  }
  if (group.done[String(message.member)] === true) {
    // Done before: its worker may have died before the join was sent (deduplicated).
    if (allDone(group)) await enqueueJoin(deps, branch, group.base);
    return { outcome: "duplicate" };
  }
  const complete = await holdMember(deps, branch, message.member, memberRunner(deps));
  if (complete) await joinAfterMembers(deps, complete, group.base, messageId);
  return { outcome: "member" };
}

/**
 * Runs one member (unless its result is held already), holds the result, marks
 * it done; when this made the group complete, the branch as the mark left it
 * (the caller joins from it), else null.
 */
export async function holdMember(
  deps: StepDeps,
  branch: BranchRecord,
  seq: number,
  runner: MemberRunner,
): Promise<BranchRecord | null> {
  const group = branch.group as GroupRecord;
  // A cancel asked for: the member is done without running; the join commits the cancel.
  const skip = branch.cancel_requested || branch.status !== "running";
  if (!skip && !(await deps.held.get(branch, group.base, seq))) {
    // Another delivery of this member may hold its result first: that one is committed.
    await deps.held.putOnce(branch, await runHeld(deps, branch, seq, runner));
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
    if (isErrorKind(error, "conflict")) return null;
    throw error;
  }
  deps.log.info("group member held", {
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    parent: group.base,
    member: seq,
  });
  // The last member joins, saving a queue hop; should it die, its message comes
  // back, finds itself done and sends the join (`runMember`).
  return marked.group && allDone(marked.group) ? marked : null;
}
