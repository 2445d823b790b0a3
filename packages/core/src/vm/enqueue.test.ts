import { describe, expect, it } from "vitest";
import type { Queue, QueueSendOptions } from "../ports/queue";
import { enqueueJoin, enqueueMember, enqueueNext, sendWake } from "./enqueue";
import { parseQueueMessage } from "./queue-message";

/** A queue that keeps what was sent, as the bytes SQS would carry. */
function recordingQueue() {
  const sent: Array<{ body: string; options: QueueSendOptions }> = [];
  const queue: Queue = {
    send: async (body, options) => {
      sent.push({ body: JSON.stringify(body), options });
    },
    retryAfter: async () => undefined,
  };
  return { queue, sent };
}

const branch = { tenant_id: "acme", task_id: "task1", name: "main" };

// The ids are pinned as literals, computed with the formulas the sends had before
// they moved here: messages already in a queue during an upgrade were deduplicated
// and grouped with them.
describe("enqueue", () => {
  it.each([
    {
      send: "the next step",
      run: (q: Queue) => enqueueNext({ queue: q }, branch, "c1"),
      body: '{"v":1,"kind":"step","tenant_id":"acme","task_id":"task1","branch":"main","head":"c1"}',
      groupId: "acme:task1:main",
      deduplicationId: "1892f280d27394aa3be0867c3de69df9cba2e225",
    },
    {
      send: "the first step",
      run: (q: Queue) => enqueueNext({ queue: q }, branch, null),
      body: '{"v":1,"kind":"step","tenant_id":"acme","task_id":"task1","branch":"main","head":null}',
      groupId: "acme:task1:main",
      deduplicationId: "e09376c6e4a9461bb787b53c8da05972fa2c4b23",
    },
    {
      send: "a step with an attempt",
      run: (q: Queue) => enqueueNext({ queue: q }, branch, "c1", "answer-w1"),
      body: '{"v":1,"kind":"step","tenant_id":"acme","task_id":"task1","branch":"main","head":"c1"}',
      groupId: "acme:task1:main",
      deduplicationId: "f10b50eb8ec871ae9de1f56cb501a5ed00294bec",
    },
    {
      send: "a group's join",
      run: (q: Queue) => enqueueJoin({ queue: q }, branch, "c1"),
      body: '{"v":1,"kind":"step","tenant_id":"acme","task_id":"task1","branch":"main","head":"c1"}',
      groupId: "acme:task1:main",
      deduplicationId: "f1f034c1e8d0ce99b12011b4a4dd692315b8a865",
    },
    {
      send: "a group's member",
      run: (q: Queue) => enqueueMember({ queue: q }, branch, "c1", 2),
      body: '{"v":1,"kind":"member","tenant_id":"acme","task_id":"task1","branch":"main","base":"c1","member":2}',
      groupId: "acme:task1:main#m2",
      deduplicationId: "7c05eda1434d0accd320b8ddbf8395331353a619",
    },
    {
      send: "a wake",
      run: (q: Queue) =>
        sendWake(
          { queue: q },
          { ...branch, branch: "main", head: "c1", wait_id: "w1", at: "2026-01-01T00:00:00Z" },
        ),
      body: '{"v":1,"kind":"step","tenant_id":"acme","task_id":"task1","branch":"main","head":"c1"}',
      groupId: "wake:acme:task1:main:w1",
      deduplicationId: "d13cf45deb207d64cb3b2d5e8df0dbda82aea499",
    },
  ])("sends $send with the body and ids it always had", async (c) => {
    const { queue, sent } = recordingQueue();
    await c.run(queue);
    expect(sent).toEqual([
      { body: c.body, options: { groupId: c.groupId, deduplicationId: c.deduplicationId } },
    ]);
    // What is sent reads back as the step (or member) message it names.
    expect(parseQueueMessage(c.body)).toEqual({ ok: true, message: JSON.parse(c.body) });
  });

  it("keeps a member's message group within the queue's 128 characters", async () => {
    const { queue, sent } = recordingQueue();
    const long = { tenant_id: "t".repeat(64), task_id: "k".repeat(64), name: "b".repeat(64) };
    await enqueueMember({ queue }, long, "c1", 12);
    const groupId = sent[0]!.options.groupId;
    expect(groupId).toBe(`${`${long.tenant_id}:${long.task_id}:${long.name}`.slice(0, 100)}#m12`);
    expect(groupId.length).toBeLessThanOrEqual(128);
  });
});
