/**
 * The worker's batch logic, separate from its entry file so that the local poller
 * and tests call exactly what Lambda calls. One SQS record is one step. Records of
 * other branches go on when one fails (FIFO: only the failed record's own group is
 * held back); a transient failure with `Retry-After` makes the message visible again
 * after that delay.
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from "@aws-lambda-powertools/batch";
import {
  afterStepFailure,
  type IngestMessage,
  type IngestPort,
  type MemberMessage,
  memberStep,
  parseQueueMessage,
  runMember,
  runStep,
  type StepDeps,
  type StepMessage,
  taskTraceContext,
  type UnreadableMessage,
  type WebhookMessage,
  type WebhookService,
} from "@stackvm/core";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";

/** The log line of a message dropped unread, by the kind it claimed. */
const DROPPED = {
  step: "dropped a malformed queue message",
  member: "dropped a malformed group member message",
  webhook: "dropped a webhook message this worker cannot read",
  ingest: "dropped a knowledge message this worker cannot handle",
} as const;

export type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * Handles a batch of the step queue: step messages run one step; webhook messages
 * (`kind: "webhook"`) make one attempt of an outgoing webhook. Both kinds share the
 * queue, so every worker must be able to deliver webhooks: `webhooks` is required.
 */
export function createWorkerHandler(
  deps: StepDeps,
  webhooks: WebhookService,
  /**
   * Knowledge messages (`kind: "ingest"`) share the queue too: the knowledge port
   * handles them (the knowledge function on AWS); none: they are dropped with a log line.
   */
  ingest?: IngestPort | null,
  /** The queue's maxReceiveCount: on that delivery a failing ingest records its error instead of retrying. */
  lastReceive = 5,
): WorkerHandler {
  /** One document's ingest, or a delete of its rows, in its knowledge base's message group. */
  const handleIngest = async (record: SQSRecord, message: IngestMessage): Promise<void> => {
    if (!ingest) {
      deps.log.error(DROPPED.ingest, {
        message_id: record.messageId,
        reason: "no knowledge index configured",
      });
      return;
    }
    const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
    const outcome = await ingest.handle(message, receives >= lastReceive);
    deps.log.info("knowledge message handled", {
      message_id: record.messageId,
      tenant_id: message.tenant_id,
      knowledge_base: message.knowledge_base,
      op: message.op,
      outcome,
    });
  };

  /** One delivery attempt; a failed one comes back after its backoff. */
  const handleWebhook = async (record: SQSRecord, message: WebhookMessage): Promise<void> => {
    const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
    const { retryAfterSeconds } = await webhooks.deliver(message, receives);
    if (retryAfterSeconds === undefined) return;
    await deps.queue.retryAfter(record.receiptHandle, retryAfterSeconds);
    throw new Error(
      `webhook ${message.webhook_id}: attempt failed, retry in ${retryAfterSeconds} s`,
    );
  };

  /** One step or group member, in its span where tracing is set (a child of the task's root span). */
  const handleStep = (record: SQSRecord, message: StepMessage | MemberMessage): Promise<void> => {
    if (!deps.tracer) return runOne(record, message);
    const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
    const step = message.kind === "member" ? memberStep(message) : message;
    return deps.tracer.span(
      "step",
      {
        "stackvm.tenant": message.tenant_id,
        "stackvm.task_id": message.task_id,
        "stackvm.branch": message.branch,
        "stackvm.head": step.head ?? undefined,
        "stackvm.member": message.kind === "member" ? message.member : undefined,
        "stackvm.attempt": attempt,
        "gen_ai.conversation.id": message.task_id,
        "langfuse.session.id": message.task_id,
        "langfuse.observation.type": "span",
        "langsmith.span.kind": "chain",
      },
      (span) => runOne(record, message, (outcome) => span.set(outcome)),
      // A message sent before tracing was on has no `trace`: the task's is the same one.
      { parent: message.trace ?? taskTraceContext(message.tenant_id, message.task_id).traceparent },
    );
  };

  /** One step or member, by its entry; the after-failure policy (`afterStepFailure`) says whether its message comes back. */
  const runOne = async (
    record: SQSRecord,
    message: StepMessage | MemberMessage,
    traced?: (attributes: Record<string, string>) => void,
  ): Promise<void> => {
    try {
      const outcome =
        message.kind === "member"
          ? await runMember(deps, message, record.messageId)
          : await runStep(deps, message, record.messageId);
      deps.log.debug("step outcome", { message_id: record.messageId, ...outcome });
      traced?.({
        "stackvm.outcome": outcome.outcome,
        ...("commit" in outcome
          ? { "stackvm.commit": outcome.commit, "stackvm.status": outcome.status }
          : {}),
      });
    } catch (error) {
      // A member's failure is recorded against the step after its group's base.
      const step = message.kind === "member" ? memberStep(message) : message;
      const after = await afterStepFailure(deps, step, error, {
        messageId: record.messageId,
        receiptHandle: record.receiptHandle,
        receives: Number(record.attributes.ApproximateReceiveCount) || 1,
        lastReceive,
      });
      traced?.({ "stackvm.outcome": "failed", "stackvm.after_failure": after });
      if (after === "retry") throw error;
    }
  };

  /** A message no version of the worker can read would fail forever: drop it loudly. */
  const drop = (record: SQSRecord, unreadable: UnreadableMessage): void => {
    deps.log.error(DROPPED[unreadable.kind], {
      message_id: record.messageId,
      issues: unreadable.issues.slice(0, 5),
    });
  };

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const parsed = parseQueueMessage(record.body);
    if (!parsed.ok) return drop(record, parsed);
    const message = parsed.message;
    switch (message.kind) {
      case "webhook":
        return handleWebhook(record, message);
      case "ingest":
        return handleIngest(record, message);
      case "step":
      case "member":
        return handleStep(record, message);
    }
  };

  return async (event, context) => {
    const processor = new SqsFifoPartialProcessorAsync();
    try {
      return await processPartialResponse(event, handleRecord, processor, {
        context,
        skipGroupOnError: true,
        // A batch whose records all failed (one early wake) answers them as failures
        // rather than failing the invocation: the same retries, without an error logged.
        throwOnFullBatchFailure: false,
      });
    } finally {
      // Lambda may freeze the process once this returns: the batch's spans go first.
      // A collector that is down costs the spans, never the steps.
      await deps.tracer
        ?.flush?.()
        .catch((error: unknown) =>
          deps.log.warn("sending the batch's trace spans failed", { error: String(error) }),
        );
    }
  };
}
