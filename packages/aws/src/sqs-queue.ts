/**
 * The queue port on SQS FIFO: one message group per task branch, explicit
 * deduplication ids (content-based deduplication is off), JSON bodies.
 */
import {
  ChangeMessageVisibilityCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import {
  type Queue,
  type QueueSendOptions,
  queueMessageText,
  visibilitySeconds,
} from "@stackvm/core";

/** The design keeps messages far below SQS's own limit. */

/**
 * `Queue` on one SQS FIFO queue.
 *
 * @example
 * const queue = new SqsQueue(clients.sqs, Resource.Steps.url);
 * await queue.send(message, { groupId: `${task}/${branch}`, deduplicationId: `${task}/${branch}/${head}` });
 */
export class SqsQueue implements Queue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(body: unknown, options: QueueSendOptions): Promise<void> {
    const text = queueMessageText(body);
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: text,
        MessageGroupId: options.groupId,
        MessageDeduplicationId: options.deduplicationId,
      }),
    );
  }

  /**
   * Sets the message's visibility timeout: whole seconds, from 1 to SQS's 12
   * hours. Zero becomes one second because fauxqs 2.4.1 with persistence fails
   * a zero timeout (it writes NULL into a NOT NULL column, answers 500, and the
   * SDK's retry then gets MessageNotInflight); one second changes nothing on AWS.
   */
  async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.max(1, visibilitySeconds(seconds)),
      }),
    );
  }
}
