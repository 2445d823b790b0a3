/**
 * The queue in memory, with SQS FIFO's semantics: one message group per ordered
 * stream, a group's next message is not handed out while one of it is in
 * flight, deduplication by id within five minutes, a visibility timeout, and a
 * dead-letter list after `maxReceiveCount` receives. Time comes from an injected
 * clock, so tests move it instead of waiting.
 */
import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../../ports/clock";
import type { Queue, QueueSendOptions, ReceivedMessage } from "../../ports/queue";
import { queueMessageText, visibilitySeconds } from "../../ports/queue";

/** SQS FIFO remembers deduplication ids for five minutes. */
export const DEDUPLICATION_WINDOW_MS = 5 * 60 * 1000;

export interface MemoryQueueOptions {
  clock?: Clock;
  /** Seconds a received message stays invisible (default 30, as SQS). */
  visibilityTimeoutSeconds?: number;
  /** Receives after which a message moves to `deadLetters` (default 5). */
  maxReceiveCount?: number;
}

/** A message as the queue holds it. */
export interface QueuedMessage {
  messageId: string;
  groupId: string;
  deduplicationId: string;
  body: string;
  sentAt: number;
  receiveCount: number;
  /** Epoch ms from which it can be received again. */
  visibleAt: number;
  /** The handle of the latest receive, null before the first. */
  receiptHandle: string | null;
}

/** What `drain` did. */
export interface DrainResult {
  /** Messages handled without error (and deleted). */
  delivered: number;
  /** Deliveries whose handler threw. */
  failed: number;
  /** What the failing handlers threw, in order. */
  errors: unknown[];
}

/** A drain handler: resolve to acknowledge, throw to fail the delivery. */
export type DrainHandler = (
  message: ReceivedMessage,
  meta: { groupId: string; deduplicationId: string },
) => unknown;

/**
 * A `Queue` held in memory. `receive`/`delete` play the consumer's side; `drain`
 * runs a handler over everything deliverable, group-ordered, for unit tests.
 *
 * @example
 * const queue = new MemoryQueue();
 * await queue.send({ v: 1, task_id: "t1" }, { groupId: "t1/main", deduplicationId: "t1/main/c0" });
 * await queue.drain(async (message) => step(JSON.parse(message.body)));
 */
export class MemoryQueue implements Queue {
  /** Every send that was accepted (not deduplicated), in order, bodies parsed. */
  readonly sent: Array<{ body: unknown; groupId: string; deduplicationId: string }> = [];
  /** Messages received more than `maxReceiveCount` times, as SQS moves them to the DLQ. */
  readonly deadLetters: QueuedMessage[] = [];
  readonly #messages: QueuedMessage[] = [];
  readonly #seen = new Map<string, number>();
  /** Receipt handles whose visibility `retryAfter` set, so that `drain` leaves them hidden. */
  readonly #delayed = new Set<string>();
  readonly #clock: Clock;
  readonly #visibilityMs: number;
  readonly #maxReceiveCount: number;

  constructor(options: MemoryQueueOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#visibilityMs = (options.visibilityTimeoutSeconds ?? 30) * 1000;
    this.#maxReceiveCount = options.maxReceiveCount ?? 5;
  }

  async send(body: unknown, options: QueueSendOptions): Promise<void> {
    checkId("groupId", options.groupId);
    checkId("deduplicationId", options.deduplicationId);
    const text = queueMessageText(body);
    const now = this.#clock.now();
    const seenAt = this.#seen.get(options.deduplicationId);
    if (seenAt !== undefined && now - seenAt < DEDUPLICATION_WINDOW_MS) return;
    this.#seen.set(options.deduplicationId, now);
    this.sent.push({ body: JSON.parse(text), ...options });
    this.#messages.push({
      messageId: randomUUID(),
      groupId: options.groupId,
      deduplicationId: options.deduplicationId,
      body: text,
      sentAt: now,
      receiveCount: 0,
      visibleAt: now,
      receiptHandle: null,
    });
  }

  async retryAfter(receiptHandle: string, seconds: number): Promise<void> {
    const message = this.#inFlight(receiptHandle);
    message.visibleAt = this.#clock.now() + visibilitySeconds(seconds) * 1000;
    this.#delayed.add(receiptHandle);
  }

  /**
   * Receives up to `max` messages as SQS FIFO does: in order within a group,
   * skipping groups that have a message in flight, moving messages received too
   * often to `deadLetters`.
   */
  async receive(max = 10, visibilityTimeoutSeconds?: number): Promise<ReceivedMessage[]> {
    const now = this.#clock.now();
    const visibilityMs =
      visibilityTimeoutSeconds === undefined ? this.#visibilityMs : visibilityTimeoutSeconds * 1000;
    const locked = new Set(
      this.#messages.filter((m) => m.visibleAt > now && m.receiveCount > 0).map((m) => m.groupId),
    );
    const received: ReceivedMessage[] = [];
    for (const message of [...this.#messages]) {
      if (received.length >= max) break;
      if (locked.has(message.groupId)) continue;
      if (message.visibleAt > now) {
        locked.add(message.groupId);
        continue;
      }
      message.receiveCount += 1;
      if (message.receiveCount > this.#maxReceiveCount) {
        this.#messages.splice(this.#messages.indexOf(message), 1);
        this.deadLetters.push(message);
        continue;
      }
      message.receiptHandle = randomUUID();
      message.visibleAt = now + visibilityMs;
      received.push({
        messageId: message.messageId,
        body: message.body,
        receiptHandle: message.receiptHandle,
        receiveCount: message.receiveCount,
      });
    }
    return received;
  }

  /** Deletes a received message (the consumer's acknowledgement); a stale handle does nothing. */
  async delete(receiptHandle: string): Promise<void> {
    const index = this.#messages.findIndex((m) => m.receiptHandle === receiptHandle);
    if (index >= 0) this.#messages.splice(index, 1);
  }

  /** Messages not yet deleted, in send order (optionally of one group). */
  pending(groupId?: string): QueuedMessage[] {
    return this.#messages
      .filter((m) => groupId === undefined || m.groupId === groupId)
      .map((m) => ({ ...m }));
  }

  /**
   * Hands every deliverable message to `handler`, one at a time, group-ordered,
   * including the messages the handler sends, until none is visible. A failed
   * delivery is retried at once (the test should not wait out a visibility
   * timeout) unless the handler called `retryAfter`, until `maxReceiveCount`.
   */
  async drain(
    handler: DrainHandler,
    options: { maxDeliveries?: number } = {},
  ): Promise<DrainResult> {
    const maxDeliveries = options.maxDeliveries ?? 10_000;
    const result: DrainResult = { delivered: 0, failed: 0, errors: [] };
    for (;;) {
      const [received] = await this.receive(1);
      if (received === undefined) return result;
      if (result.delivered + result.failed >= maxDeliveries) {
        throw new Error(
          `MemoryQueue.drain: over ${maxDeliveries} deliveries; does the handler keep sending messages?`,
        );
      }
      const message = this.#inFlight(received.receiptHandle);
      try {
        await handler(received, {
          groupId: message.groupId,
          deduplicationId: message.deduplicationId,
        });
        result.delivered += 1;
        await this.delete(received.receiptHandle);
      } catch (error) {
        result.failed += 1;
        result.errors.push(error);
        if (!this.#delayed.has(received.receiptHandle)) message.visibleAt = this.#clock.now();
      } finally {
        this.#delayed.delete(received.receiptHandle);
      }
    }
  }

  #inFlight(receiptHandle: string): QueuedMessage {
    const message = this.#messages.find((m) => m.receiptHandle === receiptHandle);
    if (message === undefined || message.visibleAt <= this.#clock.now()) {
      throw new Error(
        `receipt handle '${receiptHandle}' is unknown or its visibility timeout has passed`,
      );
    }
    return message;
  }
}

/** SQS accepts whole seconds from 0 to 12 hours. */

/** SQS allows 1 to 128 characters of ASCII letters, digits and punctuation in group and deduplication ids. */
function checkId(name: string, value: string): void {
  if (typeof value !== "string" || !/^[\x21-\x7e]{1,128}$/.test(value)) {
    throw new TypeError(
      `queue ${name} must be 1 to 128 ASCII letters, digits or punctuation (no spaces), got ${JSON.stringify(value)}`,
    );
  }
}
