import { describe, expect, it } from "vitest";
import { LiveTextStore } from "../store/live-text-store";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { type LiveBatch, RECHECK_FIRST_MS, TokenRelay, WATCH_TTL_MS } from "./token-relay";

const texts = (read: { batches: LiveBatch[] }) => read.batches.map((b) => b.event);

function setup() {
  const items = new MemoryItemStore();
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const relay = new TokenRelay({ live: new LiveTextStore(items), clock, flushMs: 10_000 });
  const target = {
    tenant: "t1",
    taskId: "task1",
    branch: "main",
    seq_no: 2,
    parent_id: "abcdefgh-1",
    final_answer: true,
  };
  return { items, relay, target, tick: (ms: number) => (now += ms) };
}

/** Counts the store's reads (`get`) from now on: how often a step looks for a watcher's mark. */
function countReads(items: MemoryItemStore): () => number {
  const get = items.get.bind(items);
  let reads = 0;
  items.get = async (key) => {
    reads++;
    return get(key);
  };
  return () => reads;
}

describe("TokenRelay", () => {
  it("writes nothing for a step that no client watches", async () => {
    const { items, relay, target } = setup();
    const sink = relay.sink(target);
    sink.delta("llm_generate", "Kyo");
    sink.delta("llm_generate", "to");
    await sink.flush();
    const page = await items.query({ pk: "T#t1#K#task1#LIVE" });
    expect(page.items).toEqual([]);
  });

  it("publishes a watched step's text in order, labelled with its step", async () => {
    const { relay, target } = setup();
    await relay.watch("t1", "task1");
    const cursor = relay.cursor();
    const sink = relay.sink(target);
    sink.delta("llm_generate", "Kyo");
    sink.delta("llm_generate", "to");
    await sink.flush();
    sink.delta("llm_generate", " keeps temples");
    await sink.flush();
    const events = texts(await relay.read("t1", "task1", cursor));
    const { tenant: _t, taskId: _k, ...label } = target;
    expect(events).toEqual([
      { ...label, purpose: "llm_generate", text: "Kyoto" },
      { ...label, purpose: "llm_generate", text: " keeps temples" },
    ]);
  });

  it("keeps the planner's text apart from the step's, by purpose", async () => {
    const { relay, target } = setup();
    await relay.watch("t1", "task1");
    const sink = relay.sink(target);
    sink.delta("plan", '{"plan"');
    sink.delta("llm_generate", "Hi");
    await sink.flush();
    const events = texts(await relay.read("t1", "task1", relay.cursor()));
    expect(events.map((e) => [e.purpose, e.text])).toEqual([
      ["plan", '{"plan"'],
      ["llm_generate", "Hi"],
    ]);
  });

  it("delivers each batch once, and one that became visible late too", async () => {
    const { relay, target, tick } = setup();
    await relay.watch("t1", "task1");
    const early = relay.sink(target);
    const late = relay.sink({ ...target, branch: "alt" });
    early.delta("llm_generate", "a");
    await early.flush();
    let cursor = relay.cursor();
    const first = await relay.read("t1", "task1", cursor);
    cursor = first.cursor;
    expect(texts(first).map((e) => e.text)).toEqual(["a"]);
    // A batch stamped before the last read (a slower clock) is still found.
    tick(-1_000);
    late.delta("llm_generate", "b");
    await late.flush();
    tick(1_200);
    const second = await relay.read("t1", "task1", cursor);
    expect(texts(second).map((e) => e.text)).toEqual(["b"]);
    expect((await relay.read("t1", "task1", second.cursor)).batches).toEqual([]);
  });

  it("stops publishing once the watch mark is older than its TTL", async () => {
    const { relay, target, tick } = setup();
    await relay.watch("t1", "task1");
    tick(WATCH_TTL_MS + 1);
    expect(await relay.watched("t1", "task1")).toBe(false);
    const sink = relay.sink(target);
    sink.delta("llm_generate", "nobody reads this");
    await sink.flush();
    expect((await relay.read("t1", "task1", { seen: new Map(), since: 0 })).batches).toEqual([]);
  });

  it("goes on when a batch cannot be written", async () => {
    const { items, relay, target } = setup();
    await relay.watch("t1", "task1");
    items.put = async () => {
      throw new Error("throttled");
    };
    const sink = relay.sink(target);
    sink.delta("llm_generate", "lost");
    await expect(sink.flush()).resolves.toBeUndefined();
  });

  it("keeps tenants apart: another tenant's watch publishes nothing, its read finds nothing", async () => {
    const { items, relay, target } = setup();
    // Another tenant names the same task id: its mark sits in its own partition.
    await relay.watch("t2", "task1");
    const sink = relay.sink(target);
    sink.delta("llm_generate", "secret");
    await sink.flush();
    expect((await items.query({ pk: "T#t1#K#task1#LIVE" })).items).toEqual([]);

    await relay.watch("t1", "task1");
    const theirs = relay.cursor();
    const published = relay.sink(target);
    published.delta("llm_generate", "secret");
    await published.flush();
    expect((await relay.read("t2", "task1", theirs)).batches).toEqual([]);
    expect((await relay.read("t1", "task1", theirs)).batches).toHaveLength(1);
    // Nothing beside the task's history: its own partition holds no token item.
    expect((await items.query({ pk: "T#t1#K#task1" })).items).toEqual([]);
  });
});

describe("TokenRelay for a watcher who comes mid-step", () => {
  it("hands over the step's text so far once the mark appears, then the rest", async () => {
    const { items, relay, target, tick } = setup();
    const reads = countReads(items);
    const sink = relay.sink(target);
    sink.delta("llm_generate", "Kyo");
    // The mark is read (not there) before the next piece.
    await new Promise((resolve) => setImmediate(resolve));
    sink.delta("llm_generate", "to ");
    expect(reads()).toBe(1);
    // A client opens the stream; the step reads the mark again at its next piece after the wait.
    await relay.watch("t1", "task1");
    const cursor = relay.cursor();
    tick(RECHECK_FIRST_MS);
    sink.delta("llm_generate", "keeps ");
    await sink.flush();
    sink.delta("llm_generate", "temples");
    await sink.flush();
    expect(reads()).toBe(2);
    const texts = (await relay.read("t1", "task1", cursor)).batches.map((b) => b.event.text);
    expect(texts.join("")).toBe("Kyoto keeps temples");
  });

  it("reads the mark of a step nobody watches a few times only: 20 s of text, at most 12 reads", async () => {
    const { items, relay, target, tick } = setup();
    const reads = countReads(items);
    const sink = relay.sink(target);
    for (let at = 0; at < 20_000; at += 50) {
      sink.delta("llm_generate", "word ");
      await new Promise((resolve) => setImmediate(resolve));
      tick(50);
    }
    await sink.flush();
    expect(reads()).toBeGreaterThan(1);
    expect(reads()).toBeLessThanOrEqual(12);
    expect((await items.query({ pk: "T#t1#K#task1#LIVE" })).items).toEqual([]);
  });

  it("sends the first piece after a quiet spell at once, and no more than one batch per flush interval", async () => {
    const items = new MemoryItemStore();
    let now = 1_700_000_000_000;
    const relay = new TokenRelay({
      live: new LiveTextStore(items),
      clock: { now: () => now },
      flushMs: 10_000,
    });
    await relay.watch("t1", "task1");
    const sink = relay.sink({
      tenant: "t1",
      taskId: "task1",
      branch: "main",
      seq_no: 0,
      parent_id: null,
      final_answer: true,
    });
    const batches = async () =>
      (await items.query({ pk: "T#t1#K#task1#LIVE" })).items.filter((i) => i.sk.startsWith("TOK#"));
    sink.delta("llm_generate", "first");
    // The mark is read, then the piece goes without waiting for the interval.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await batches()).map((b) => (b.event as { text: string }).text)).toEqual(["first"]);
    sink.delta("llm_generate", " second");
    sink.delta("llm_generate", " third");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await batches()).toHaveLength(1);
    now += 10_000;
    await sink.flush();
    expect((await batches()).map((b) => (b.event as { text: string }).text)).toEqual([
      "first",
      " second third",
    ]);
  });
});
