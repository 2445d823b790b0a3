/**
 * What a branch's mark says of its parallel group (`vm/group.ts`): `group`
 * (the base, the members, which are done) while the group runs and joins, and
 * `group_joined` (the base) for one commit after the join left it. Questions
 * only: read from the branch in memory, nothing written.
 */
import type { BranchRecord, GroupRecord } from "../store/records";

/** True when every member of the group has held its result. */
export const allDone = (group: GroupRecord): boolean =>
  group.members.every((m) => group.done[String(m)] === true);

/** True when the branch's PC is a member of its running group. */
export const inGroup = (branch: BranchRecord): branch is BranchRecord & { group: GroupRecord } =>
  !!branch.group && branch.pc !== null && branch.group.members.includes(branch.pc);

/**
 * True when the step after the head commits a held result of the branch's
 * complete group (the join) instead of running anything: not while a cancel or
 * a plan update waits, which the step runs as it would anywhere.
 */
export const joins = (branch: BranchRecord): branch is BranchRecord & { group: GroupRecord } =>
  inGroup(branch) &&
  allDone(branch.group) &&
  !branch.cancel_requested &&
  !branch.pending &&
  branch.plan !== null;

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
