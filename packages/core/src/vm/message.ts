/**
 * The queue's wire messages: versioned and strict, so that a message from a newer
 * or older writer is refused with a clear error instead of misread.
 */

import * as z from "zod";
import { TRACEPARENT } from "../ports/tracer";

const Id = z.string().check(z.minLength(1), z.maxLength(128));

const Branch = z.string().check(z.minLength(1), z.maxLength(64));
/** The task's trace (`ports/tracer.ts`), a W3C traceparent; absent on messages sent before it. */
const Trace = z.string().check(z.regex(TRACEPARENT)).optional();
const Seq = z.number().check(z.int(), z.gte(0));

/** "Run the instruction after commit `head` on this branch." */
export const StepMessage = z
  .object({
    v: z.literal(1),
    kind: z.literal("step").default("step"),
    tenant_id: Id,
    task_id: Id,
    branch: Branch,
    head: Id.nullable(),
    trace: Trace,
  })
  .strict();
export type StepMessage = z.infer<typeof StepMessage>;

/**
 * "Run instruction `member` of the parallel group that started after commit
 * `base`, and hold its result apart" (`vm/group.ts`): the member entry
 * (`vm/member.ts`), not the step.
 */
export const MemberMessage = z
  .object({
    v: z.literal(1),
    kind: z.literal("member"),
    tenant_id: Id,
    task_id: Id,
    branch: Branch,
    base: Id,
    member: Seq,
    trace: Trace,
  })
  .strict();
export type MemberMessage = z.infer<typeof MemberMessage>;

/**
 * A member message as releases before the `member` kind sent it: a step message
 * whose `member` names the member and whose `head` is the group's base. Still
 * read, so that one left in a queue across an upgrade runs its member
 * (`queue-message.ts` reads it as a {@link MemberMessage}).
 */
export const LegacyMemberMessage = z
  .object({
    v: z.literal(1),
    kind: z.literal("step").default("step"),
    tenant_id: Id,
    task_id: Id,
    branch: Branch,
    head: Id,
    member: Seq,
    trace: Trace,
  })
  .strict();

/** The branch and head a message's failure is recorded against (a member's: its group's base). */
export type StepRef = Pick<StepMessage, "tenant_id" | "task_id" | "branch" | "head">;

/** The step a member message belongs to: the step after its group's base. */
export const memberStep = (m: MemberMessage): StepRef => ({
  tenant_id: m.tenant_id,
  task_id: m.task_id,
  branch: m.branch,
  head: m.base,
});

/** The message group of a branch: SQS FIFO hands out one message per group at a time. */
export const branchGroupId = (m: { tenant_id: string; task_id: string; branch: string }): string =>
  `${m.tenant_id}:${m.task_id}:${m.branch}`;

/**
 * "Deliver this task's outgoing webhook": queued work on the step queue (so a
 * worker that dies mid-delivery does not lose it), in a message group of its own
 * so that its retries never hold back a branch.
 */
export const WebhookMessage = z
  .object({
    v: z.literal(1),
    kind: z.literal("webhook"),
    tenant_id: Id,
    task_id: Id,
    webhook_id: Id,
  })
  .strict();
export type WebhookMessage = z.infer<typeof WebhookMessage>;
