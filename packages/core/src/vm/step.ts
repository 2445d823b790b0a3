/**
 * The step protocol: run the instruction after `head` on a branch, commit it, move
 * the head, enqueue the next step. One read (the branch) and two writes (the commit,
 * the head: `vm/commit.ts`) on the common path.
 *
 * `runStep` reads top-down, and calls nothing that calls it back:
 * 1. read the branch; a message for another head is a duplicate, a resume, or
 *    the join of a group that died between two member commits (goes on below);
 * 2. a branch that ended, is queued for a slot, or waits does nothing more;
 * 3. a parallel group (`vm/group.ts`, entered once): its join commits the held
 *    results, its start fans out the members (`vm/member.ts` runs them);
 * 4. the step's work (`vm/decide.ts`), or its failure (`vm/failed-step.ts`
 *    decides what the failure does: back to the queue, or an error commit);
 * 5. the commit tail (`vm/commit-tail.ts`): build, write, move the head, hooks,
 *    log line, enqueue the next step.
 *
 * Delivery is at least once, so every path is safe to run twice:
 * - a message whose `head` is not the branch head is a duplicate (one read), except
 *   the message for the head's parent, which re-enqueues the head's successor: a
 *   crash between the head move and the enqueue does not stall the branch;
 * - the commit key is derived from (task, branch, parent): a racing or repeated
 *   step finds the commit written (`ConflictError`) and moves the head to *that*
 *   commit, which also repairs a crash between the commit write and the head move;
 * - the head moves only from the expected parent (a conditional update).
 *
 * Every step message is sent through `vm/enqueue.ts`.
 */
import { TERMINAL_STATUSES } from "../model-values";
import type { BranchRecord } from "../store/records";
import { WaitRequest } from "../tools/tool";
import { commitStep, type StepWork } from "./commit-tail";
import { decide, draftForFailure, memberRunner } from "./decide";
import { enqueueNext } from "./enqueue";
import { failedStep } from "./failed-step";
import { runGroup } from "./group";
import { joinedAt } from "./group-mark";
import type { StepMessage } from "./message";
import type { Draft } from "./pending";
import { carriedCalls, failingSince, unreachableBound, unreachableFailure } from "./retrying";
import type { StepDeps } from "./step-deps";
import type { StepOutcome } from "./step-outcome";
import { openSession } from "./step-session";
import { enterWait, holdWhileWaiting } from "./wait";

export type { StepOutcome } from "./step-outcome";

export async function runStep(
  deps: StepDeps,
  message: StepMessage,
  /** The queue's id of the message, carried into the step's log lines. */
  messageId?: string,
): Promise<StepOutcome> {
  const branch = await deps.store.getBranch(message.tenant_id, message.task_id, message.branch);
  if (!branch) return { outcome: "gone" };
  // The join of a parallel group that died between two member commits goes on
  // from the head (`vm/join.ts`); any other message for another head stops here.
  if (branch.head !== message.head && joinedAt(branch, message.head) !== "go_on") {
    return otherHead(deps, branch, message);
  }
  if (TERMINAL_STATUSES.has(branch.status)) return { outcome: "duplicate" };
  // A branch queued for a running slot starts when one frees (`RunningSlots`), not here.
  if (branch.status === "queued") return { outcome: "duplicate" };
  if (branch.status === "waiting") {
    const held = await holdWhileWaiting(deps, branch);
    if (held) return held;
  }
  // A parallel group: the join of a complete one, or the fan-out of one at the PC.
  const grouped = await runGroup(deps, branch, memberRunner(deps), messageId);
  if (grouped) return grouped;
  const work = await doStep(deps, branch);
  if ("outcome" in work) return work;
  return (await commitStep(deps, branch, work, messageId)).outcome;
}

/**
 * A message for a head the branch is not at. The message for the head's parent
 * came back: its worker may have died after the head moved. A running branch
 * lost its next enqueue: resume it. An ended branch may have missed its terminal
 * hooks (task status, outgoing webhook, quotas), which are safe to repeat: run
 * them again. The join of a group whose last commit is written resumes too.
 */
async function otherHead(
  deps: StepDeps,
  branch: BranchRecord,
  message: StepMessage,
): Promise<StepOutcome> {
  const resumes = message.head === branch.prev_head || joinedAt(branch, message.head) === "resume";
  if (branch.head && resumes) {
    if (!TERMINAL_STATUSES.has(branch.status)) {
      await enqueueNext(deps, branch, branch.head);
      return { outcome: "resumed", head: branch.head };
    }
    if (deps.onTerminal) await deps.onTerminal(branch);
  }
  return { outcome: "duplicate" };
}

/** Runs the step's work: its draft, or its failure's; or the wait it asked for. */
async function doStep(
  deps: StepDeps,
  branch: BranchRecord,
): Promise<StepWork | { outcome: "waiting" }> {
  const started = deps.clock.now();
  // An unreachable LLM is retried inside the step only until its bound (`vm/retrying.ts`).
  const bound = unreachableBound(deps);
  const since = failingSince(branch, started);
  const { session, watch } = openSession(deps, branch, branch.pc, since + bound);
  let draft: Draft;
  try {
    draft = await decide(deps, branch, session);
  } catch (error) {
    await watch.settled();
    if (error instanceof WaitRequest) return enterWait(deps, branch, error.spec);
    const failure = unreachableFailure(since, error, deps.clock.now(), bound) ?? error;
    // A failure the queue retries takes this delivery's calls to the branch's retry record.
    if (failedStep(failure, session.calls).does === "retry") throw failure;
    draft = draftForFailure(deps, branch, failure);
  }
  // The last "no call in flight" is written before the commit moves the head.
  await watch.settled();
  // The calls of earlier deliveries that failed come first: every call made is in a commit.
  return {
    draft,
    calls: [...carriedCalls(branch), ...session.calls],
    durationMs: deps.clock.now() - started,
  };
}
