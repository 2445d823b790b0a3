/**
 * What `usage.steps` counts, and what the `max_steps` budget limits: the plan's
 * instructions that ran, one per `step` commit, and one per `error` commit of
 * an instruction that failed. Writing or updating the plan, the judge's
 * evaluation, a cancel and the commit that reports a spent budget are commits
 * too, but not steps of the plan: a plan of two instructions that ran counts 2.
 */
import type { BranchRecord, CommitRecord } from "../store/records";

/**
 * True when the commit records an instruction of the plan that ran.
 *
 * @example
 * countsAsStep(branch, { ...commit, type: "plan" }) // false
 */
export function countsAsStep(before: BranchRecord, commit: CommitRecord): boolean {
  if (commit.type === "step") return true;
  // An instruction failed (not the planner): the branch had a plan and nothing pending.
  return (
    commit.type === "error" &&
    (commit.instruction ?? null) !== null &&
    before.head !== null &&
    before.pending === null
  );
}
