/**
 * The worker's batch logic, separate from its entry file so that the local poller
 * and tests call exactly what Lambda calls. One SQS record is one step. Records of
 * other branches go on when one fails (FIFO: only the failed record's own group is
 * held back); a transient failure with `Retry-After` makes the message visible again
 * after that delay.
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from "@aws-lambda-powertools/batch";
import {
  classifyFailure,
  DEFAULT_LLM_UNREACHABLE_MS,
  failRefusedStep,
  IngestMessage,
  type IngestPort,
  isStoreRefusal,
  recordRetry,
  runStep,
  type StepDeps,
  StepMessage,
  WebhookMessage,
  type WebhookService,
} from "@stackvm/core";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";

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
  const handleIngest = async (record: SQSRecord, body: unknown): Promise<void> => {
    const parsed = IngestMessage.safeParse(body);
    if (!parsed.success || !ingest) {
      deps.log.error("dropped a knowledge message this worker cannot handle", {
        message_id: record.messageId,
        ...(parsed.success
          ? { reason: "no knowledge index configured" }
          : { issues: parsed.error.issues.slice(0, 5) }),
      });
      return;
    }
    const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
    const outcome = await ingest.handle(parsed.data, receives >= lastReceive);
    deps.log.info("knowledge message handled", {
      message_id: record.messageId,
      tenant_id: parsed.data.tenant_id,
      knowledge_base: parsed.data.knowledge_base,
      op: parsed.data.op,
      outcome,
    });
  };

  /** One delivery attempt; a failed one comes back after its backoff. */
  const handleWebhook = async (record: SQSRecord, body: unknown): Promise<void> => {
    const parsed = WebhookMessage.safeParse(body);
    if (!parsed.success) {
      deps.log.error("dropped a webhook message this worker cannot read", {
        message_id: record.messageId,
        issues: parsed.error.issues.slice(0, 5),
      });
      return;
    }
    const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
    const { retryAfterSeconds } = await webhooks.deliver(parsed.data, receives);
    if (retryAfterSeconds === undefined) return;
    await deps.queue.retryAfter(record.receiptHandle, retryAfterSeconds);
    throw new Error(
      `webhook ${parsed.data.webhook_id}: attempt failed, retry in ${retryAfterSeconds} s`,
    );
  };

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      body = undefined;
    }
    if ((body as { kind?: unknown } | undefined)?.kind === "webhook") {
      return handleWebhook(record, body);
    }
    if ((body as { kind?: unknown } | undefined)?.kind === "ingest") {
      return handleIngest(record, body);
    }
    const parsed = StepMessage.safeParse(body);
    if (!parsed.success) {
      // A message no version of the worker can read would fail forever: drop it loudly.
      deps.log.error("dropped a malformed queue message", {
        message_id: record.messageId,
        issues: parsed.error.issues.slice(0, 5),
      });
      return;
    }
    const message = parsed.data;
    try {
      const outcome = await runStep(deps, message, record.messageId);
      deps.log.debug("step outcome", { message_id: record.messageId, ...outcome });
    } catch (error) {
      if (isStoreRefusal(error)) {
        // The same write would be refused on every try: end the branch now, with its cause.
        deps.log.error("the store refused a step: the branch fails without retrying", {
          message_id: record.messageId,
          tenant_id: message.tenant_id,
          task_id: message.task_id,
          branch: message.branch,
          parent: message.head,
          error: (error as Error).message,
        });
        await failRefusedStep(deps, message, error);
        return;
      }
      const decision = classifyFailure(error);
      const early = (error as { code?: unknown }).code === "wait_not_due";
      // A wake that came before its time (`vm/wait.ts`) is the plan working, not a failure.
      (early ? deps.log.info : deps.log.warn).call(
        deps.log,
        early ? "wake early: hidden until due" : "step will be retried",
        {
          message_id: record.messageId,
          tenant_id: message.tenant_id,
          task_id: message.task_id,
          branch: message.branch,
          parent: message.head,
          error: (error as Error).message,
        },
      );
      if (early) {
        if (decision.action === "retry" && decision.afterSeconds !== undefined) {
          await deps.queue
            .retryAfter(record.receiptHandle, decision.afterSeconds)
            .catch(() => undefined);
        }
        throw error;
      }
      // Failure path only: the branch shows why it waits and when it is tried again.
      const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
      const retrying = await recordRetry(
        deps,
        message,
        error,
        receives,
        lastReceive,
        deps.llmUnreachableMs ?? DEFAULT_LLM_UNREACHABLE_MS,
      ).catch((failure: unknown) => {
        deps.log.warn("could not record the retry on the branch", { error: String(failure) });
        return null;
      });
      const delay = retrying
        ? Math.max(0, Math.round((Date.parse(retrying.next_attempt_at) - deps.clock.now()) / 1000))
        : decision.action === "retry"
          ? decision.afterSeconds
          : undefined;
      if (delay !== undefined) {
        await deps.queue.retryAfter(record.receiptHandle, delay).catch(() => undefined);
      }
      throw error;
    }
  };

  return async (event, context) => {
    const processor = new SqsFifoPartialProcessorAsync();
    return processPartialResponse(event, handleRecord, processor, {
      context,
      skipGroupOnError: true,
      // A batch whose records all failed (one early wake) answers them as failures
      // rather than failing the invocation: the same retries, without an error logged.
      throwOnFullBatchFailure: false,
    });
  };
}
