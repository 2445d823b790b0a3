/**
 * Parallel groups (plan language 1.1, `plan/groups.ts` finds them): the members of
 * a group run at once, each in its own invocation, and still commit one by one,
 * in plan order, as ordinary linear commits.
 *
 * 1. **Fan-out.** The step after `head` (the group's *base*) finds that the PC
 *    starts a group run (`groupRunAt`, at most the namespace's `parallel_width`).
 *    It marks the branch with one conditional update (`group`, `group_base`:
 *    head unchanged, no group yet), sends one member message per other member
 *    (a `MemberMessage`, each in a message group of its own, deduplicated by
 *    (task, branch, base, member)) and runs the first member itself.
 * 2. **Members** (`vm/member.ts`, the member entry). A member runs its
 *    instruction against the variables at the base (members do not read each
 *    other's outputs), holds its result apart (`store/held-result-store.ts`,
 *    written once: a member run twice keeps the first result) and marks itself
 *    done on the branch (`group.done.{seq}`, conditional on `group_base`). The
 *    member that sees every member done runs the *join* itself, in its
 *    invocation; should it die, its redelivered message sends the join as a
 *    step message for the base.
 * 3. **Join** (`vm/join.ts`). The step after the base of a complete group
 *    commits the held results in plan order, one linear commit each, through
 *    the step's commit tail (`vm/commit-tail.ts`), in a loop. Each commit is
 *    written once; a joiner that dies between two commits is followed by its
 *    redelivered message, which goes on from the head (`joinedAt`), and two
 *    joiners at once conflict as two workers on one step. The commit that
 *    leaves the group clears the mark (the head move, `vm/commit.ts`) and the
 *    step after the group is enqueued as usual.
 *
 * A member that failed is held as its error: the members before it commit, and
 * its commit is the `error` commit of an ordinary failed step (plan update or
 * the end of the branch); the results after it are never committed. A forked
 * branch has no mark: from a commit inside a group it runs the rest of the group
 * (from its PC on) as a group of its own, so nothing before the fork runs again.
 * Ordinary steps pay nothing for this: the step enters here once (`runGroup`),
 * which reads nothing for an unmarked branch and computes the fan-out check
 * from the plan in memory.
 */
import { DEFAULT_GROUP_WIDTH, groupRunAt } from "../plan/groups";
import type { BranchRecord, GroupRecord } from "../store/records";
import { markBranch } from "./branch-mark";
import { enqueueJoin, enqueueMember } from "./enqueue";
import type { MemberRunner } from "./group-held";
import { inGroup, joins } from "./group-mark";
import { joinAfterMembers, joinGroup } from "./join";
import { holdMember } from "./member";
import type { StepDeps } from "./step-deps";
import type { StepOutcome } from "./step-outcome";

/** The width of a branch's groups: the namespace's `parallel_width`, else 4. */
export function groupWidth(branch: BranchRecord): number {
  return branch.config.namespace.parallel_width ?? DEFAULT_GROUP_WIDTH;
}

/**
 * The step's one entry to parallel groups: for a branch whose group is
 * complete, the join (its commits); for a group that begins at the PC, or goes
 * on, the fan-out (`{ outcome: "grouped" }`); null for an ordinary step.
 */
export async function runGroup(
  deps: StepDeps,
  branch: BranchRecord,
  runner: MemberRunner,
  /** The queue's id of the message, carried into the join's log lines. */
  messageId?: string,
): Promise<StepOutcome | null> {
  if (joins(branch)) return joinGroup(deps, branch, messageId);
  if (branch.cancel_requested || branch.pending || branch.head === null) return null;
  if (branch.pc === null || !branch.plan) return null;
  if (branch.group) {
    if (!inGroup(branch)) return null;
    // Redelivered, or sent by the sweep: send the members that are not done again.
    await fanOut(deps, branch, null, messageId);
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
  await fanOut(deps, marked, runner, messageId);
  return { outcome: "grouped" };
}

/**
 * Sends a member message for each member not done; with a runner, runs the
 * first one here (the invocation that started the group runs one member too),
 * and the join should that one be the last.
 */
async function fanOut(
  deps: StepDeps,
  branch: BranchRecord & { group?: GroupRecord | null },
  runner: MemberRunner | null,
  messageId?: string,
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
  if (!runner || here === undefined) return;
  const complete = await holdMember(deps, branch, here, runner);
  if (complete) await joinAfterMembers(deps, complete, group.base, messageId);
}
