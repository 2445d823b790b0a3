/**
 * The queue port: FIFO delivery with one message group per ordered stream
 * (one per task branch), at-least-once, as SQS FIFO does.
 */
export interface QueueSendOptions {
  /** Messages of one group are delivered in order, one at a time. */
  groupId: string;
  /** Messages with the same id within five minutes are delivered once. */
  deduplicationId: string;
}

/** A message handed to a consumer, as SQS hands it to Lambda. */
export interface ReceivedMessage {
  messageId: string;
  body: string;
  receiptHandle: string;
  receiveCount: number;
}

export interface Queue {
  send(body: unknown, options: QueueSendOptions): Promise<void>;
  /**
   * Makes a received message visible again after `seconds` (used to honour
   * `Retry-After`): the consumer then reports it as failed. Rounded up to whole
   * seconds and cut to SQS's 12 hours; the group waits meanwhile.
   */
  retryAfter(receiptHandle: string, seconds: number): Promise<void>;
}
