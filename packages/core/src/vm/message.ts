/**
 * The queue's wire messages: versioned and strict, so that a message from a newer
 * or older writer is refused with a clear error instead of misread.
 */

import * as z from "zod";
import { TRACEPARENT } from "../ports/tracer";

const Id = z.string().check(z.minLength(1), z.maxLength(128));

/** "Run the instruction after commit `head` on this branch." */
export const StepMessage = z
  .object({
    v: z.literal(1),
    kind: z.literal("step").default("step"),
    tenant_id: Id,
    task_id: Id,
    branch: z.string().check(z.minLength(1), z.maxLength(64)),
    head: Id.nullable(),
    /**
     * A member of a parallel group (`group.ts`): "run instruction `member` of the
     * group that started after `head`, and hold its result apart".
     */
    member: z.number().check(z.int(), z.gte(0)).optional(),
    /** The task's trace (`ports/tracer.ts`), a W3C traceparent; absent on messages sent before it. */
    trace: z.string().check(z.regex(TRACEPARENT)).optional(),
  })
  .strict();
export type StepMessage = z.infer<typeof StepMessage>;

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
