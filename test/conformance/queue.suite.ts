/**
 * The conformance suite of the `Queue` port: every adapter must deliver in
 * order within a group, hold a group while one of its messages is in flight,
 * drop duplicates within the deduplication window and honour `retryAfter`.
 * The port only sends; each fixture brings the consumer's side (receive and
 * delete) as its backend offers it.
 */
import { randomUUID } from "node:crypto";
import type { Queue, ReceivedMessage } from "@stackvm/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface QueueFixture {
  queue: Queue;
  /** One receive of up to `max` messages, without waiting for more. */
  receive(max: number): Promise<ReceivedMessage[]>;
  /** Deletes a received message. */
  ack(receiptHandle: string): Promise<void>;
  close?(): Promise<void>;
}

/** Registers the suite for one adapter; `open` gives a fresh, empty queue to each test. */
export function queueSuite(name: string, open: () => Promise<QueueFixture>): void {
  describe(`Queue conformance: ${name}`, () => {
    let fixture: QueueFixture;
    beforeEach(async () => {
      fixture = await open();
    });
    afterEach(async () => {
      await fixture.close?.();
    });

    const send = (group: string, body: unknown, id: string = randomUUID()) =>
      fixture.queue.send(body, { groupId: group, deduplicationId: id });

    /** Receives and deletes until the queue has nothing visible, in delivery order. */
    async function consumeAll(): Promise<unknown[]> {
      const bodies: unknown[] = [];
      for (let round = 0; round < 50; round++) {
        const batch = await fixture.receive(10);
        if (batch.length === 0) return bodies;
        for (const message of batch) {
          bodies.push(JSON.parse(message.body));
          await fixture.ack(message.receiptHandle);
        }
      }
      throw new Error("the queue did not empty in 50 receives");
    }

    it("delivers the body as JSON with a message id and a receive count", async () => {
      const body = { v: 1, task_id: "t1", nested: { list: [1, "two", null] } };
      await send("t1/main", body);
      const [message, ...rest] = await fixture.receive(10);
      expect(rest).toEqual([]);
      expect(JSON.parse(message!.body)).toEqual(body);
      expect(message!.messageId).not.toBe("");
      expect(message!.receiveCount).toBe(1);
    });

    it("keeps the order within a group", async () => {
      for (let i = 0; i < 5; i++) await send("g-a", { i });
      expect(await consumeAll()).toEqual([0, 1, 2, 3, 4].map((i) => ({ i })));
    });

    it("holds a group while one of its messages is in flight, not the other groups", async () => {
      await send("g-a", "a1");
      await send("g-a", "a2");
      await send("g-b", "b1");
      const first = await fixture.receive(10);
      const bodies = first.map((m) => JSON.parse(m.body));
      expect(bodies).toContain("a1");
      expect(bodies).toContain("b1");
      if (bodies.includes("a2")) expect(bodies.indexOf("a1")).toBeLessThan(bodies.indexOf("a2"));
      expect(await fixture.receive(10)).toEqual([]);
      for (const message of first) await fixture.ack(message.receiptHandle);
      const later = await consumeAll();
      expect([...bodies, ...later].sort()).toEqual(["a1", "a2", "b1"]);
    });

    it("delivers a deduplication id once", async () => {
      await send("g-a", "first", "same-id");
      await send("g-a", "second", "same-id");
      await send("g-b", "third", "same-id");
      expect(await consumeAll()).toEqual(["first"]);
    });

    it("redelivers after retryAfter(0), counting the receive", async () => {
      await send("g-a", "a1");
      const [message] = await fixture.receive(10);
      await fixture.queue.retryAfter(message!.receiptHandle, 0);
      // At once in memory; SqsQueue waits one second (see its retryAfter).
      let again: ReceivedMessage | undefined;
      for (let attempt = 0; again === undefined && attempt < 50; attempt++) {
        [again] = await fixture.receive(10);
        if (again === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(JSON.parse(again!.body)).toBe("a1");
      expect(again!.receiveCount).toBe(2);
    });

    it("hides the message and holds its group after retryAfter(seconds)", async () => {
      await send("g-a", "a1");
      await send("g-a", "a2");
      const [a1, ...rest] = await fixture.receive(1);
      expect(rest).toEqual([]);
      await fixture.queue.retryAfter(a1!.receiptHandle, 600);
      await send("g-b", "b1");
      const next = await fixture.receive(10);
      expect(next.map((m) => JSON.parse(m.body))).toEqual(["b1"]);
    });
  });
}
