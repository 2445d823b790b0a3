/**
 * The step protocol: run the instruction after `head` on a branch, commit it, move
 * the head, enqueue the next step. One read (the branch) and two writes (the commit,
 * the head: `vm/commit.ts`) on the common path.
 *
 * Delivery is at least once, so every path is safe to run twice:
 * - a message whose `head` is not the branch head is a duplicate (one read), except
 *   the message for the head's parent, which re-enqueues the head's successor: a
 *   crash between the head move and the enqueue does not stall the branch;
 * - the commit key is derived from (task, branch, parent): a racing or repeated step
 *   finds the commit written (`ConflictError`) and moves the head to *that* commit,
 *   which also repairs a crash between the commit write and the head move;
 * - the head moves only from the expected parent (a conditional update).
 *
 * What a step does is chosen in `vm/decide.ts`; every step message is sent
 * through `vm/enqueue.ts`.
 */
import { classifyFailure } from "../errors";
import type { Status } from "../model";
import { TERMINAL_STATUSES } from "../model-values";
import type { BranchRecord } from "../store/records";
import { WaitRequest } from "../tools/tool";
import { buildCommit, moveHead, writeCommit } from "./commit";
import { decide, draftForFailure, memberRunner } from "./decide";
import { enqueueNext, stepMessage } from "./enqueue";
import { joinContinues, joinedAt, runGroup, runMember, takeHeld } from "./group";
import type { StepMessage } from "./message";
import type { Draft } from "./pending";
import {
  carriedCalls,
  carryCalls,
  failingSince,
  unreachableBound,
  unreachableFailure,
} from "./retrying";
import type { StepDeps } from "./step-deps";
import { openSession } from "./step-session";
import { enterWait, holdWhileWaiting } from "./wait";

export type StepOutcome =
  | { outcome: "committed" | "repaired"; commit: string; status: Status }
  | { outcome: "duplicate" }
  | { outcome: "resumed"; head: string }
  /** The branch waits (`vm/wait.ts`): nothing was committed. */
  | { outcome: "waiting" }
  /** A parallel group began or went on (`vm/group.ts`); a member's result was held. */
  | { outcome: "grouped" | "member" }
  | { outcome: "gone" };

export async function runStep(
  deps: StepDeps,
  message: StepMessage,
  /** The queue's id of the message, carried into the step's log lines. */
  messageId?: string,
  /** The branch as the previous commit of a group's join left it (no read needed). */
  known?: BranchRecord,
): Promise<StepOutcome> {
  const { tenant_id: tenant, task_id: taskId, branch: name } = message;
  if (message.member !== undefined) {
    const join = (base: string) =>
      runStep(deps, stepMessage({ tenant_id: tenant, task_id: taskId, name }, base), messageId);
    return runMember(deps, { ...message, member: message.member }, memberRunner(deps), join);
  }
  const branch = known ?? (await deps.store.getBranch(tenant, taskId, name));
  if (!branch) return { outcome: "gone" };
  if (branch.head !== message.head) {
    // The message for the head's parent came back: its worker may have died after the
    // head moved. A running branch lost its next enqueue: resume it. An ended branch
    // may have missed its terminal hooks (task status, outgoing webhook, quotas),
    // which are safe to repeat: run them again.
    // The join of a parallel group died between two member commits, or after its
    // last one (`vm/group.ts`): go on from the head, or resume as above.
    const join = joinedAt(branch, message.head);
    if (join === "go_on") return runStep(deps, { ...message, head: branch.head }, messageId);
    if (branch.head && (message.head === branch.prev_head || join === "resume")) {
      if (!TERMINAL_STATUSES.has(branch.status)) {
        await enqueueNext(deps, branch, branch.head);
        return { outcome: "resumed", head: branch.head };
      }
      if (deps.onTerminal) await deps.onTerminal(branch);
    }
    return { outcome: "duplicate" };
  }
  if (TERMINAL_STATUSES.has(branch.status)) return { outcome: "duplicate" };
  // A branch queued for a running slot starts when one frees (`RunningSlots`), not here.
  if (branch.status === "queued") return { outcome: "duplicate" };
  if (branch.status === "waiting") {
    const held = await holdWhileWaiting(deps, branch);
    if (held) return held;
  }

  // A parallel group (`vm/group.ts`): commit a member's held result, or fan out.
  const held = await takeHeld(deps, branch);
  if (!held) {
    const join = (base: string) => runStep(deps, { ...message, head: base }, messageId);
    const grouped = await runGroup(deps, branch, memberRunner(deps), join);
    if (grouped) return grouped;
  }

  const started = deps.clock.now();
  // An unreachable LLM is retried inside the step only until its bound (`vm/retrying.ts`).
  const bound = unreachableBound(deps);
  const since = failingSince(branch, started);
  const { session, watch } = openSession(deps, branch, branch.pc, since + bound);
  let draft: Draft;
  try {
    if (held?.error) throw held.error;
    draft = held ? held.draft : await decide(deps, branch, session);
  } catch (error) {
    await watch.settled();
    if (error instanceof WaitRequest) return enterWait(deps, branch, error.spec);
    const failure = unreachableFailure(since, error, deps.clock.now(), bound) ?? error;
    // A failure the queue retries takes this delivery's calls to the branch's retry record.
    if (classifyFailure(failure).action === "retry") carryCalls(failure, session.calls);
    draft = draftForFailure(deps, branch, failure);
  }
  // The last "no call in flight" is written before the commit moves the head.
  await watch.settled();
  // The calls of earlier deliveries that failed come first: every call made is in a commit.
  const calls = [...carriedCalls(branch), ...(held ? held.calls : session.calls)];
  const durationMs = held ? held.durationMs : deps.clock.now() - started;
  const commit = await buildCommit(deps, branch, draft, calls, durationMs);

  const failed = (failure: unknown) =>
    buildCommit(deps, branch, draftForFailure(deps, branch, failure), calls, durationMs);
  const { commit: written, outcome } = await writeCommit(deps, branch, commit, failed, messageId);
  const moved = await moveHead(deps, branch, written);
  if (!moved) return { outcome: "duplicate" };
  deps.onCommit?.(written, moved);
  deps.log.info("step committed", {
    ...(messageId ? { message_id: messageId } : {}),
    tenant_id: tenant,
    task_id: taskId,
    branch: name,
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
  if (held && joinContinues(moved)) {
    // The next member's result is held too: commit it in this invocation (`vm/group.ts`).
    return runStep(deps, { ...message, head: written.commit_id }, messageId, moved);
  }
  if (written.status_after === "running") {
    await enqueueNext(deps, moved, written.commit_id);
  } else if (deps.onTerminal) {
    await deps.onTerminal(moved);
  }
  return { outcome, commit: written.commit_id, status: written.status_after };
}
