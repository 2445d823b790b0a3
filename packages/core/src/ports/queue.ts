/**
 * The queue port: FIFO delivery with one message group per ordered stream
 * (one per task branch), at-least-once, as SQS FIFO does.
 */
import { TooLargeError } from "../errors";
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

/** The design's ceiling for a message (SQS allows more; we stay far below). */
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** SQS's longest visibility timeout: a longer `retryAfter` is cut to it. */
export const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/**
 * A message body as the queue carries it: JSON, at most SQS's 256 KiB
 * (`TooLargeError` past it). Every queue adapter sends this text.
 */
export function queueMessageText(body: unknown): string {
  const text = JSON.stringify(body);
  if (text === undefined) throw new TypeError("a queue message body must be JSON-serializable");
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new TooLargeError(
      `queue message of ${bytes} bytes is over ${MAX_MESSAGE_BYTES}: send a reference to stored data instead`,
    );
  }
  return text;
}

export function visibilitySeconds(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError(`retryAfter seconds must be a number >= 0, got ${seconds}`);
  }
  return Math.min(Math.ceil(seconds), MAX_VISIBILITY_SECONDS);
}
