import { describe, expect, it } from "vitest";
import { memorySystem } from "../testing/memory-system";
import { StepMessage } from "../vm/message";
import { runStep } from "../vm/step";
import { decodeEventId, decodeResumePoint, encodeEventId } from "./event-ids";
import { type TaskEvent, TaskEvents } from "./events";
import { Presenter } from "./present";
import { CreateTaskInput } from "./task-input";
import { TokenRelay } from "./token-relay";

const PLAN = [
  { seq_no: 0, type: "assign", parameters: { a: 1 } },
  { seq_no: 1, type: "assign", parameters: { b: "${a} + 1" } },
  { seq_no: 2, type: "assign", parameters: { final_answer: "b is ${b}" } },
];

function setup() {
  const sys = memorySystem();
  const events = new TaskEvents({
    store: sys.store,
    tasks: sys.tasks.reads,
    presenter: new Presenter(sys.blobs),
    clock: sys.clock,
    pollMs: 100,
    heartbeatMs: 1_000,
    maxConnectionMs: 10_000,
  });
  return { ...sys, events };
}

/** Runs queued steps one by one, moving the clock so that commits have distinct times. */
async function steps(sys: ReturnType<typeof setup>, count = Number.POSITIVE_INFINITY) {
  for (let i = 0; i < count; i++) {
    const [message] = await sys.queue.receive(1);
    if (!message) return;
    sys.clock.advance(10);
    await runStep(sys.step, StepMessage.parse(JSON.parse(message.body)));
    await sys.queue.delete(message.receiptHandle);
  }
}

/**
 * The events of a task's stream with live text, until its connection's cap;
 * `during` runs once, right after the stream's `nth` read of live text, with a
 * way to publish a step's text on the main branch as the step would.
 */
async function streamLive(
  sys: ReturnType<typeof setup>,
  taskId: string,
  nth: number,
  during: (
    publish: (seqNo: number, parentId: string | null, text: string) => Promise<void>,
  ) => Promise<void>,
): Promise<TaskEvent[]> {
  const relay = new TokenRelay({ live: sys.stores.liveText, clock: sys.clock, flushMs: 10_000 });
  const publish = async (seqNo: number, parentId: string | null, text: string) => {
    const sink = relay.sink({
      tenant: "acme",
      taskId,
      branch: "main",
      seq_no: seqNo,
      parent_id: parentId,
      final_answer: false,
    });
    sink.delta("llm_generate", text);
    await sink.flush();
  };
  const read = relay.read.bind(relay);
  let reads = 0;
  relay.read = async (...args) => {
    const answer = await read(...args);
    if (++reads === nth) await during(publish);
    return answer;
  };
  const events = new TaskEvents({
    store: sys.store,
    tasks: sys.tasks.reads,
    presenter: new Presenter(sys.blobs),
    clock: sys.clock,
    tokens: relay,
    pollMs: 100,
    maxConnectionMs: 1_000,
    sleep: async (ms) => sys.clock.advance(ms),
  });
  const seen: TaskEvent[] = [];
  for await (const event of events.stream("acme", taskId)) seen.push(event);
  return seen;
}

const commitIds = (events: TaskEvent[]) =>
  events.flatMap((e) => (e.event === "commit" ? [e.data.commit_id] : []));

describe("TaskEvents.poll", () => {
  it("delivers each commit once, oldest first, and nothing again after its cursor", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await steps(sys, 2);
    const first = await sys.events.poll("acme", task.task_id, new Map());
    const bid = (await sys.store.getBranch("acme", task.task_id, "main"))!.bid;
    expect(commitIds(first.events)).toEqual([`${bid}-0`, `${bid}-1`]);
    expect(first.done).toBe(false);
    expect((await sys.events.poll("acme", task.task_id, first.cursor)).events).toEqual([]);

    await steps(sys);
    const second = await sys.events.poll("acme", task.task_id, first.cursor);
    expect(commitIds(second.events)).toEqual([`${bid}-2`, `${bid}-3`]);
    expect(second.done).toBe(true);
    expect(second.task.status).toBe("completed");
  });

  it("resumes after any event id with exactly the commits after it", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await steps(sys);
    const all = (await sys.events.poll("acme", task.task_id, new Map())).events;
    const ids = all.flatMap((e) => (e.event === "commit" ? [e.id] : []));
    expect([...ids].sort()).toEqual(ids);
    const resumed = await sys.events.poll("acme", task.task_id, decodeEventId(ids[1]));
    expect(commitIds(resumed.events)).toEqual(commitIds(all).slice(2));
  });

  it("delivers a fork's own commits, not the ones it shares, and drops deleted branches", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await steps(sys);
    const before = await sys.events.poll("acme", task.task_id, new Map());
    const mainBid = (await sys.store.getBranch("acme", task.task_id, "main"))!.bid;
    await sys.branches.fork("acme", task.task_id, { from_commit: `${mainBid}-1`, name: "again" });
    await steps(sys);
    const after = await sys.events.poll("acme", task.task_id, before.cursor);
    const forkBid = (await sys.store.getBranch("acme", task.task_id, "again"))!.bid;
    expect(commitIds(after.events)).toEqual([`${forkBid}-2`, `${forkBid}-3`]);
    expect(after.events.every((e) => e.event !== "commit" || e.data.branch === "again")).toBe(true);

    await sys.branches.delete("acme", task.task_id, "again");
    const gone = await sys.events.poll("acme", task.task_id, after.cursor);
    expect([...gone.cursor.keys()]).toEqual([mainBid]);
  });

  it("answers 404 for another tenant's task", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await expect(sys.events.poll("globex", task.task_id, new Map())).rejects.toMatchObject({
      kind: "not_found",
    });
  });
});

describe("event ids", () => {
  it("round-trip through the cursor and refuse ids this stream never sent", () => {
    const cursor = new Map([
      ["abcd1234", 4],
      ["zzzz0000", 12],
    ]);
    const id = encodeEventId("2026-01-01T00:00:01.000Z", cursor);
    expect(id).toBe("2026-01-01T00:00:01.000Z/abcd1234-4.zzzz0000-12");
    expect(decodeEventId(id)).toEqual(cursor);
    expect(decodeEventId(null)).toEqual(new Map());
    for (const bad of ["42", "2026-01-01T00:00:01.000Z/nope", "soon/abcd1234-4"]) {
      expect(() => decodeEventId(bad)).toThrow(/reconnect without it/);
    }
  });

  it("carry the text sent and the end, and refuse a mark this stream never wrote", () => {
    const cursor = new Map([["abcd1234", 4]]);
    const texts = new Map([
      ["x7f2k9q1", 12],
      ["p0q8", 0],
    ]);
    const id = encodeEventId("2026-01-01T00:00:01.000Z", cursor, { texts, ended: true });
    expect(id).toBe("2026-01-01T00:00:01.000Z/abcd1234-4/x7f2k9q1-12.p0q8-0/end");
    expect(decodeResumePoint(id)).toEqual({ cursor, texts, ended: true });
    expect(decodeEventId(id)).toEqual(cursor);
    expect(decodeResumePoint("2026-01-01T00:00:01.000Z//end")).toEqual({
      cursor: new Map(),
      texts: new Map(),
      ended: true,
    });
    for (const bad of [
      "2026-01-01T00:00:01.000Z/abcd1234-4/UPPER-1",
      "2026-01-01T00:00:01.000Z/abcd1234-4/a-1/b-2",
      "2026-01-01T00:00:01.000Z/abcd1234-4/end/a-1",
      "2026-01-01T00:00:01.000Z/abcd1234-4/a-x",
    ]) {
      expect(() => decodeResumePoint(bad), bad).toThrow(/reconnect without it/);
    }
  });
});

describe("TaskEvents.finished", () => {
  it("answers true for the end's id of a finished task, and false once a fork made it go on", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await steps(sys);
    const seen: TaskEvent[] = [];
    for await (const event of sys.events.stream("acme", task.task_id)) seen.push(event);
    const end = seen.at(-1)!;
    expect(end.event).toBe("end");
    const endId = (end as { id: string }).id;
    const lastCommit = seen.filter((e) => e.event === "commit").at(-1) as { id: string };
    expect(await sys.events.finished("acme", task.task_id, endId)).toBe(true);
    // A client that received the last commit but not the end still gets the end.
    expect(await sys.events.finished("acme", task.task_id, lastCommit.id)).toBe(false);
    expect(await sys.events.finished("acme", task.task_id, null)).toBe(false);
    const mainBid = (await sys.store.getBranch("acme", task.task_id, "main"))!.bid;
    await sys.branches.fork("acme", task.task_id, { from_commit: `${mainBid}-1`, name: "again" });
    expect(await sys.events.finished("acme", task.task_id, endId)).toBe(false);
  });
});

describe("TaskEvents.stream", () => {
  it("streams commits, status changes and the end, waiting between polls", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    // Each wait between polls lets one step run.
    const events = new TaskEvents({
      store: sys.store,
      tasks: sys.tasks.reads,
      presenter: new Presenter(sys.blobs),
      clock: sys.clock,
      sleep: async () => steps(sys, 1),
    });
    const seen: TaskEvent[] = [];
    for await (const event of events.stream("acme", task.task_id)) seen.push(event);
    const kinds = seen.map((e) => (e.event === "status" ? `status:${e.data.status}` : e.event));
    expect(kinds).toEqual([
      "status:running",
      "commit",
      "commit",
      "commit",
      "commit",
      "status:completed",
      "end",
    ]);
  });

  it("sends a step's last text before its commit when both land between two reads", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    const head = (await sys.store.getBranch("acme", task.task_id, "main"))!.head;
    // Right after the stream's last read of live text before its second poll (the
    // read after its wait), the step publishes its text and commits: the poll
    // finds the commit with the text unread.
    const events = await streamLive(sys, task.task_id, 2, async (publish) => {
      await publish(0, head, "the whole text");
      await steps(sys, 1);
    });
    const seen = events.flatMap((event) =>
      event.event === "token"
        ? [`token:${event.data.text}`]
        : event.event === "commit"
          ? [`commit:${event.data.parent_id}`]
          : [],
    );
    expect(seen).toEqual(["token:the whole text", `commit:${head}`]);
  });

  it("sends a step's text after the commit it starts from, when the text is read first", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    const headOf = async () => (await sys.store.getBranch("acme", task.task_id, "main"))!.head!;
    // Right after the stream's first read of live text, a step commits and the next
    // step writes text: the stream reads that text before its poll sees the commit.
    const events = await streamLive(sys, task.task_id, 1, async (publish) => {
      await steps(sys, 1);
      await publish(1, await headOf(), "the next step's text");
    });
    const seen = events.flatMap((event) =>
      event.event === "token"
        ? [`token:${event.data.text}`]
        : event.event === "commit"
          ? [`commit:${event.data.commit_id}`]
          : [],
    );
    expect(seen).toEqual([`commit:${await headOf()}`, "token:the next step's text"]);
  });

  it("sends heartbeats while nothing happens and ends the connection at its cap", async () => {
    const sys = setup(); // no step runs: the queue is never drained
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    const events = new TaskEvents({
      store: sys.store,
      tasks: sys.tasks.reads,
      presenter: new Presenter(sys.blobs),
      clock: sys.clock,
      pollMs: 500,
      heartbeatMs: 2_000,
      maxConnectionMs: 5_000,
      sleep: async (ms) => sys.clock.advance(ms),
    });
    const kinds: string[] = [];
    for await (const event of events.stream("acme", task.task_id)) kinds.push(event.event);
    expect(kinds).toEqual(["status", "heartbeat", "heartbeat"]);
  });
});

describe("group events", () => {
  it("sends a branch's running group when it starts and each time a member is held, once each", async () => {
    const sys = setup();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: PLAN }));
    await steps(sys, 1);
    const branch = (await sys.store.getBranch("acme", task.task_id, "main"))!;
    const group = { base: branch.head, members: [1, 2], done: {}, started_at: branch.updated_at };
    const mark = (done: Record<string, boolean>) =>
      sys.store.updateBranch("acme", task.task_id, "main", {
        set: [[["group"], { ...group, done }]],
      });
    // Each wait between polls changes the mark: started, the same again, the second member held.
    const changes = [() => mark({}), () => mark({ "2": true }), () => mark({ "2": true })];
    await changes.shift()!();
    const events = new TaskEvents({
      store: sys.store,
      tasks: sys.tasks.reads,
      presenter: new Presenter(sys.blobs),
      clock: sys.clock,
      maxConnectionMs: 10_000,
      sleep: async (ms) => {
        sys.clock.advance(ms);
        await changes.shift()?.();
      },
    });
    const seen: TaskEvent[] = [];
    // No step runs: the stream ends at its cap, after every change was polled.
    for await (const event of events.stream("acme", task.task_id)) seen.push(event);
    expect(changes).toEqual([]);
    const groups = seen.flatMap((e) => (e.event === "group" ? [e.data] : []));
    expect(groups).toEqual([
      {
        branch: "main",
        base: branch.head,
        members: [1, 2],
        done: [],
        started_at: branch.updated_at,
      },
      {
        branch: "main",
        base: branch.head,
        members: [1, 2],
        done: [2],
        started_at: branch.updated_at,
      },
    ]);
    const listed = await sys.events.poll("acme", task.task_id, new Map());
    expect(listed.groups).toEqual([groups[1]]);
  });
});
