import { describe, expect, it } from "vitest";
import { MemoryQueue } from "./memory-queue";

function fakeClock(start = 1_000_000) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

describe("MemoryQueue", () => {
  it("forgets a deduplication id after five minutes", async () => {
    const clock = fakeClock();
    const queue = new MemoryQueue({ clock });
    await queue.send("a", { groupId: "g", deduplicationId: "d" });
    clock.t += 5 * 60 * 1000 - 1;
    await queue.send("b", { groupId: "g", deduplicationId: "d" });
    clock.t += 1;
    await queue.send("c", { groupId: "g", deduplicationId: "d" });
    expect(queue.sent.map((s) => s.body)).toEqual(["a", "c"]);
  });

  it("drains group by group in order, including messages the handler sends", async () => {
    const queue = new MemoryQueue();
    await queue.send({ n: 1 }, { groupId: "a", deduplicationId: "a1" });
    await queue.send({ n: 1 }, { groupId: "b", deduplicationId: "b1" });
    const seen: string[] = [];
    const result = await queue.drain(async (message, { groupId }) => {
      const { n } = JSON.parse(message.body) as { n: number };
      seen.push(`${groupId}${n}`);
      if (n < 3) await queue.send({ n: n + 1 }, { groupId, deduplicationId: `${groupId}${n + 1}` });
    });
    expect(result).toEqual({ delivered: 6, failed: 0, errors: [] });
    expect(seen.filter((s) => s.startsWith("a"))).toEqual(["a1", "a2", "a3"]);
    expect(seen.filter((s) => s.startsWith("b"))).toEqual(["b1", "b2", "b3"]);
    expect(queue.pending()).toEqual([]);
  });

  it("retries a failing delivery at once and dead-letters it after maxReceiveCount", async () => {
    const queue = new MemoryQueue({ maxReceiveCount: 3 });
    await queue.send("bad", { groupId: "g", deduplicationId: "1" });
    await queue.send("next", { groupId: "g", deduplicationId: "2" });
    const seen: string[] = [];
    const result = await queue.drain((message) => {
      seen.push(JSON.parse(message.body));
      if (message.body === '"bad"') throw new Error(`attempt ${message.receiveCount}`);
    });
    expect(seen).toEqual(["bad", "bad", "bad", "next"]);
    expect(result.failed).toBe(3);
    expect((result.errors[2] as Error).message).toBe("attempt 3");
    expect(queue.deadLetters.map((m) => m.body)).toEqual(['"bad"']);
  });

  it("leaves a message hidden after retryAfter until the clock passes", async () => {
    const clock = fakeClock();
    const queue = new MemoryQueue({ clock });
    await queue.send("later", { groupId: "g", deduplicationId: "1" });
    const first = await queue.drain(async (message) => {
      await queue.retryAfter(message.receiptHandle, 30);
      throw new Error("rate limited");
    });
    expect(first.failed).toBe(1);
    expect(await queue.receive()).toEqual([]);
    clock.t += 30_000;
    const second = await queue.drain(() => undefined);
    expect(second.delivered).toBe(1);
  });

  it("makes a received message visible again after the visibility timeout", async () => {
    const clock = fakeClock();
    const queue = new MemoryQueue({ clock, visibilityTimeoutSeconds: 10 });
    await queue.send("m", { groupId: "g", deduplicationId: "1" });
    const [first] = await queue.receive();
    clock.t += 9_999;
    expect(await queue.receive()).toEqual([]);
    clock.t += 1;
    const [again] = await queue.receive();
    expect(again?.messageId).toBe(first?.messageId);
    expect(again?.receiveCount).toBe(2);
    await expect(queue.retryAfter(first!.receiptHandle, 1)).rejects.toThrow(
      /unknown or its visibility/,
    );
  });

  it.each([
    ["a group id with a space", { groupId: "a b", deduplicationId: "d" }, /groupId/],
    ["an empty deduplication id", { groupId: "g", deduplicationId: "" }, /deduplicationId/],
    [
      "a group id over 128 characters",
      { groupId: "g".repeat(129), deduplicationId: "d" },
      /groupId/,
    ],
  ])("refuses %s", async (_, options, message) => {
    await expect(new MemoryQueue().send("x", options)).rejects.toThrow(message);
  });

  it("refuses a body over 256 KiB as too large", async () => {
    const error = await new MemoryQueue()
      .send("x".repeat(256 * 1024), { groupId: "g", deduplicationId: "d" })
      .catch((e: unknown) => e);
    expect((error as { kind?: string }).kind).toBe("too_large");
  });
});
