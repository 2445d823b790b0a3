/**
 * Waiting branches (plan language 1.1): `wait` resumes after a time, `ask_human`
 * when a person answers (or its timeout passes). A wait writes no commit of its
 * own: the instruction's one commit is written when the wait ends, so "one
 * commit per instruction" and forks hold as for any step.
 *
 * While it waits the branch is `waiting` with a `waiting` record (`WaitingRecord`)
 * and nothing runs or polls for it:
 *
 * - the step that meets the wait sets the record with one conditional update
 *   (head unchanged, still running, no cancel asked for) and schedules the wake;
 * - the wake is a step message for the same head in a message group of its own
 *   (so that a cancel or an answer is not queued behind it). Up to
 *   {@link SQS_DELAY_LIMIT_SECONDS} away it is sent now and hides itself until the
 *   due time (FIFO queues have no per-message delay: an early receive makes the
 *   message invisible for the rest, as outgoing webhooks back off); further away,
 *   the wake port (EventBridge Scheduler's one-time schedules, the local
 *   scheduler) sends it at the due time;
 * - an early or repeated message costs one read: `holdWhileWaiting` answers it
 *   (re-arming the wake, which is idempotent, so a crash after the update and
 *   before the wake loses nothing), and at or after the due time the ordinary
 *   step runs the instruction. A wake delivered twice finds the head moved: the
 *   step protocol makes it exactly once.
 */
import { RetryableError, StepError } from "../errors";
import { randomId } from "../ids";
import { MAX_WAIT_SECONDS, waitSecondsProblem, zonedTime } from "../plan/plan-values";
import type { Lookup } from "../plan/references";
import { resolveReferences } from "../plan/references";
import type { WaitInstruction } from "../plan/schema";
import type { Wake } from "../ports/wake";
import type { BranchRecord, WaitingRecord } from "../store/records";
import { type ToolContext, WaitRequest, type WaitSpec } from "../tools/tool";
import { markBranch } from "./branch-mark";
import { sendWake } from "./enqueue";
import type { StepDeps } from "./step-deps";

/** Waits up to this far are delayed by the queue; further ones by the wake port. */
export const SQS_DELAY_LIMIT_SECONDS = 15 * 60;

/** The time a waiting record resumes by itself (its `until` or timeout), or null. */
export function dueAt(waiting: WaitingRecord): number | null {
  const due = waiting.kind === "time" ? waiting.until : waiting.expires_at;
  return due === undefined ? null : Date.parse(due);
}

/** Schedules the wake of a waiting branch whose record has a due time. */
async function armWake(deps: StepDeps, branch: BranchRecord, waiting: WaitingRecord) {
  const due = dueAt(waiting);
  if (due === null) return;
  const wake: Wake = {
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    head: waiting.head,
    wait_id: waiting.id,
    at: new Date(due).toISOString(),
  };
  if (due - deps.clock.now() <= SQS_DELAY_LIMIT_SECONDS * 1000 || !deps.wakes) {
    await sendWake(deps, wake);
  } else {
    await deps.wakes.wakeAt(wake);
  }
}

/**
 * For a step message that finds its branch waiting: null when the step should
 * run (the answer is in, or the due time passed); otherwise the wait is kept:
 * its wake re-armed, and a message that came early hidden until the due time
 * (a `RetryableError` with that delay, which the worker turns into a visibility
 * change).
 */
export async function holdWhileWaiting(
  deps: StepDeps,
  branch: BranchRecord,
): Promise<{ outcome: "waiting" } | null> {
  const waiting = branch.waiting;
  if (!waiting || branch.cancel_requested || waiting.answer) return null;
  const due = dueAt(waiting);
  const now = deps.clock.now();
  if (due !== null && now >= due) {
    // Due: run on if the tenant has a running slot free; else the branch is queued.
    if (deps.resumeSlot && !(await deps.resumeSlot(branch))) return { outcome: "waiting" };
    return null;
  }
  if (due !== null && due - now <= SQS_DELAY_LIMIT_SECONDS * 1000) {
    throw new RetryableError(
      "wait_not_due",
      `the branch waits until ${new Date(due).toISOString()}`,
      Math.ceil((due - now) / 1000),
    );
  }
  // A repeated message of the step that began the wait: make sure its effects exist.
  await armWake(deps, branch, waiting);
  await deps.onWaiting?.(branch);
  return { outcome: "waiting" };
}

/**
 * Puts the branch in `waiting` (one conditional update) and arms the wake and
 * the hooks (`task.waiting` webhook, the task's status, the running slot). A
 * branch that moved or was asked to cancel meanwhile is left alone, and the
 * message comes back (a retry) so that the cancel is seen.
 */
export async function enterWait(
  deps: StepDeps,
  branch: BranchRecord,
  spec: WaitSpec,
): Promise<{ outcome: "waiting" }> {
  const now = new Date(deps.clock.now()).toISOString();
  const waiting: WaitingRecord = {
    id: randomId(24),
    head: branch.head,
    seq_no: branch.pc,
    started_at: now,
    ...spec,
  };
  const moved = await markBranch(deps, branch, {
    set: [
      [["status"], "waiting"],
      [["waiting"], waiting],
      // At the top of the item, where a condition can name it: an answer is
      // conditional on the wait it answers (`WaitService`).
      [["waiting_id"], waiting.id],
    ],
    raced: { code: "wait_raced", message: "the branch changed while it began to wait" },
    log: {
      message: "branch waiting",
      fields: {
        head: branch.head,
        kind: waiting.kind,
        ...(waiting.until ? { until: waiting.until } : {}),
        ...(waiting.expires_at ? { expires_at: waiting.expires_at } : {}),
      },
    },
  });
  await armWake(deps, moved, waiting);
  await deps.onWaiting?.(moved);
  return { outcome: "waiting" };
}

/**
 * Runs a `wait` instruction: done when the branch's wait for it is due (or the
 * time is already past), else a `WaitRequest`.
 */
export function runWait(
  instruction: WaitInstruction,
  lookup: Lookup,
  context: Pick<ToolContext, "waiting" | "now">,
): { inputs: Record<string, unknown> } {
  const now = context.now ?? Date.now();
  const waiting = context.waiting;
  if (waiting?.kind === "time" && waiting.until !== undefined) {
    if (now >= Date.parse(waiting.until)) {
      return { inputs: { until: waiting.until, waited_since: waiting.started_at } };
    }
    throw new WaitRequest({ kind: "time", until: waiting.until });
  }
  const until = resolveUntil(instruction, lookup, now);
  if (until <= now) return { inputs: { until: new Date(until).toISOString() } };
  throw new WaitRequest({ kind: "time", until: new Date(until).toISOString() });
}

/** The due time of a `wait` in epoch milliseconds, its references resolved. */
function resolveUntil(instruction: WaitInstruction, lookup: Lookup, now: number): number {
  const p = resolveReferences(instruction.parameters, lookup) as Record<string, unknown>;
  if ("seconds" in p) {
    const seconds = typeof p.seconds === "string" ? Number(p.seconds) : p.seconds;
    const problem =
      typeof seconds === "number" ? waitSecondsProblem(seconds) : "it is not a number of seconds";
    if (problem) {
      throw new StepError(
        "bad_wait",
        `wait.seconds is ${JSON.stringify(p.seconds).slice(0, 100)}, and ${problem}`,
      );
    }
    return now + (seconds as number) * 1000;
  }
  const until = p.until;
  const time = typeof until === "string" ? zonedTime(until) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new StepError(
      "bad_wait",
      `wait.until must be an ISO 8601 time with its zone, on a day that exists (e.g. 2026-12-01T09:00:00Z), not ${JSON.stringify(until).slice(0, 100)}`,
    );
  }
  // A time given as text or by reference is held to the year as seconds are.
  if (time - now > MAX_WAIT_SECONDS * 1000) {
    throw new StepError(
      "bad_wait",
      `wait.until is ${until}, more than a year away (the longest a wait may be): wait at most until ${new Date(now + MAX_WAIT_SECONDS * 1000).toISOString()}`,
    );
  }
  return time;
}
