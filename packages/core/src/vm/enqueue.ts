/**
 * The one door of step and member messages to the queue: every "run the step
 * after `head`" and "run member `seq` of the group after `base`" is built and
 * sent here, with its message group and deduplication id.
 *
 * The ids are the protocol (a message sent twice within the queue's five minutes
 * is delivered once; a branch's steps are delivered in order, one at a time), and
 * messages already in a queue during an upgrade were sent with them, so they do
 * not change:
 *
 * | send       | message group                          | deduplication id                         |
 * | ---------- | -------------------------------------- | ---------------------------------------- |
 * | next step  | `{tenant}:{task}:{branch}`             | digest(task, branch, head, attempt)      |
 * | group join | `{tenant}:{task}:{branch}`             | digest(task, branch, base, "join")       |
 * | member     | `{tenant}:{task}:{branch}` (≤100) `#m{seq}` | digest("member", task, branch, base, seq) |
 * | wake       | `wake:{tenant}:{task}:{branch}:{wait}` | digest("wake", task, branch, wait)       |
 *
 * A member is a message of its own kind (`MemberMessage`, kind `member`); its
 * ids are the ones it had as a step message with `member`, so that one sent
 * before the upgrade and its resend after it are still delivered once.
 *
 * A member and a wake each have a message group of their own: members run at
 * once, and a wake (which may hide itself until due) holds back no cancel or
 * answer queued for its branch.
 */

import { digest } from "../ids";
import type { Queue, QueueSendOptions } from "../ports/queue";
import { taskTraceContext } from "../ports/tracer";
import type { Wake } from "../ports/wake";
import type { BranchRecord } from "../store/records";
import { branchGroupId, type MemberMessage, type StepMessage } from "./message";

/** The branch a step message names. */
export type BranchRef = Pick<BranchRecord, "tenant_id" | "task_id" | "name">;

/** Why a step message is sent: each reason has its own group and deduplication rule. */
export type StepSend =
  /** The step after `head`; `attempt` tells apart sends that must not be deduplicated with an earlier one. */
  | { reason: "next"; attempt: string }
  /** The join of a parallel group: the step after its base, once the members are done. */
  | { reason: "join" }
  /** Member `seq` of the group that started after `head` (`vm/group.ts`). */
  | { reason: "member"; seq: number }
  /** The wake of a waiting branch (`vm/wait.ts`). */
  | { reason: "wake"; waitId: string };

/** The step message "run the instruction after commit `head`". */
export function stepMessage(branch: BranchRef, head: string | null): StepMessage {
  return {
    v: 1,
    kind: "step",
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    head,
    ...traceOf(branch),
  };
}

/** The member message "run member `seq` of the group that started after commit `base`". */
export function memberMessage(branch: BranchRef, base: string, seq: number): MemberMessage {
  return {
    v: 1,
    kind: "member",
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    base,
    member: seq,
    ...traceOf(branch),
  };
}

const traceOf = (branch: BranchRef): { trace?: string } =>
  carryTrace ? { trace: taskTraceContext(branch.tenant_id, branch.task_id).traceparent } : {};

let carryTrace = false;

/**
 * Makes this process's step messages carry their task's trace (`trace`), once
 * tracing is configured (`packages/functions/src/otel-tracer.ts`). Off, a step
 * message is the body it always was, which every worker of an earlier version
 * reads: turn tracing on once every function runs this version.
 */
export function carryTraceContext(on: boolean): void {
  carryTrace = on;
}

/** The message group and deduplication id of a step message sent for `send`. */
export function stepRoute(message: StepMessage | MemberMessage, send: StepSend): QueueSendOptions {
  const { task_id: task, branch } = message;
  // A member's ids name its group's base where a step's name its head.
  const head = message.kind === "member" ? message.base : message.head;
  switch (send.reason) {
    case "next":
      return {
        groupId: branchGroupId(message),
        deduplicationId: digest(task, branch, head, send.attempt),
      };
    case "join":
      return {
        groupId: branchGroupId(message),
        deduplicationId: digest(task, branch, head, "join"),
      };
    case "member":
      return {
        groupId: `${branchGroupId(message).slice(0, 100)}#m${send.seq}`,
        deduplicationId: digest("member", task, branch, head, send.seq),
      };
    case "wake":
      return {
        groupId: `wake:${message.tenant_id}:${task}:${branch}:${send.waitId}`,
        deduplicationId: digest("wake", task, branch, send.waitId),
      };
  }
}

/** Sends one step or member message: the only `queue.send` of them. */
async function sendStep(
  deps: { queue: Queue },
  message: StepMessage | MemberMessage,
  send: StepSend,
) {
  await deps.queue.send(message, stepRoute(message, send));
}

/**
 * Enqueues "run the instruction after `head`" for the branch.
 *
 * @example
 * await enqueueNext(deps, branch, branch.head, `answer-${waitId}`);
 */
export async function enqueueNext(
  deps: { queue: Queue },
  branch: BranchRef,
  head: string | null,
  attempt = "",
): Promise<void> {
  await sendStep(deps, stepMessage(branch, head), { reason: "next", attempt });
}

/** Enqueues the join of a parallel group: the step after its base, apart from the one that started it. */
export async function enqueueJoin(
  deps: { queue: Queue },
  branch: BranchRef,
  base: string,
): Promise<void> {
  await sendStep(deps, stepMessage(branch, base), { reason: "join" });
}

/** Enqueues member `seq` of the group that started after `base`, in a message group of its own. */
export async function enqueueMember(
  deps: { queue: Queue },
  branch: BranchRef,
  base: string,
  seq: number,
): Promise<void> {
  await sendStep(deps, memberMessage(branch, base, seq), { reason: "member", seq });
}

/** Enqueues the wake message: the step after `head`, in the wake's own message group. */
export async function sendWake(deps: { queue: Queue }, wake: Wake): Promise<void> {
  const branch = { tenant_id: wake.tenant_id, task_id: wake.task_id, name: wake.branch };
  await sendStep(deps, stepMessage(branch, wake.head), { reason: "wake", waitId: wake.wait_id });
}
