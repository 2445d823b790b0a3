/**
 * The step queue and its dead-letter queue.
 *
 * FIFO with one message group per task branch, so a branch's steps never run
 * side by side while different branches run in parallel. Content-based
 * deduplication lets a sender omit `MessageDeduplicationId`: a step message
 * (`{v, tenant_id, task_id, branch, head}`) sent twice within five minutes is
 * the same step, and is delivered once.
 */

/** The worker's timeout: one instruction, which may wait on the LLM and the sandbox. */
export const workerTimeoutSeconds = 180;

/**
 * `LLM_TIMEOUT_MS` of the functions that call the LLM on AWS: one answer must
 * finish inside one invocation, with time left to commit the step (or record
 * its failure), so 30 s below the function's own limit: 150 s in the worker.
 * Locally the default is 5 minutes; a model that needs longer per answer runs
 * on the local stack, not on Lambda (docs/deploy.md).
 */
export function llmTimeoutMsWithin(functionTimeoutSeconds: number): string {
  return String((functionTimeoutSeconds - 30) * 1000);
}

/**
 * How long a received message stays hidden. AWS asks for six times the
 * function's timeout for a Lambda event source, so that a batch whose
 * invocation was throttled can still be retried before the message reappears;
 * it must never be below the timeout, or a message would be handed to a second
 * worker while the first still runs it.
 */
export const visibilityTimeoutSeconds = 6 * workerTimeoutSeconds;

/** Receives before a message that keeps failing moves to the DLQ. */
export const maxReceiveCount = 5;

/** Failed step messages, kept 14 days (the SQS maximum) for the DLQ consumer and for inspection. */
export const deadLetterQueue = new sst.aws.Queue("StepsDlq", {
  fifo: true,
  transform: {
    queue: (args) => {
      args.messageRetentionSeconds = 14 * 24 * 60 * 60;
      return undefined;
    },
  },
});

/** One message per step to run; also carries queued outgoing webhook deliveries. */
export const queue = new sst.aws.Queue("Steps", {
  fifo: { contentBasedDeduplication: true },
  visibilityTimeout: `${visibilityTimeoutSeconds} seconds`,
  dlq: { queue: deadLetterQueue.arn, retry: maxReceiveCount },
});
