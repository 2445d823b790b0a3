import {
  CLOSED_POLICY,
  type Item,
  type ItemStore,
  loadLlmConfig,
  runStep,
  StepMessage,
  silentLog,
} from "@stackvm/core";
import { CreateTaskInput } from "@stackvm/core/api-records";
import { MemoryBlobs, MemoryItemStore, MemoryQueue } from "@stackvm/core/testing";
import { describe, expect, it } from "vitest";
import { createSweepHandler, recoverStarts, resumeRunning } from "./sweep-handler";
import { createSystem } from "./system";
import { unconfiguredLlm } from "./unconfigured-llm";

/**
 * A fault in a store write or an enqueue: `crash` never answers (the process died
 * in the call; nothing after it runs), `fail` rejects.
 */
type Fault = { when: (what: string) => boolean; kind: "crash" | "fail" };

/** The item store with a fault armed once, on the first put whose sort key matches. */
function faultyStore(inner: ItemStore, faults: Fault[]): ItemStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      // Methods run on the store itself: its private fields are not the proxy's.
      if (prop !== "put") return value.bind(target);
      return (item: Item, ...rest: unknown[]) => {
        const at = faults.findIndex((f) => f.when(`put ${item.sk}`));
        if (at < 0) return value.call(target, item, ...rest);
        const [fault] = faults.splice(at, 1);
        return fault!.kind === "crash"
          ? new Promise(() => undefined)
          : Promise.reject(new Error("the store is unavailable"));
      };
    },
  });
}

/** The real wiring over the in-memory adapters, with a clock the test moves. */
function memoryWiring(faults: Fault[] = []) {
  const clock = { time: Date.parse("2026-01-01T00:00:00Z"), now: () => clock.time };
  const queue = new MemoryQueue({ clock });
  const system = createSystem(
    {
      items: faultyStore(new MemoryItemStore(), faults),
      blobs: new MemoryBlobs({ clock }),
      queue,
      clock,
      sandbox: { run: async () => Promise.reject(new Error("no sandbox")) },
      llm: unconfiguredLlm,
    },
    {
      llm: loadLlmConfig({ LLM_MODEL: "test-model" }),
      log: silentLog,
      localMode: true,
      outbound: CLOSED_POLICY,
      adminKey: null,
      publicUrl: null,
      maxPlanUpdates: 1,
      planRepairs: 1,
      maxBodyBytes: 1024 * 1024,
      quotas: { max_running_tasks: 1 },
    },
  );
  const sweep = createSweepHandler(system.sweep(15 * 60_000));
  const recover = async () => ({
    starts_repaired: await recoverStarts(system.sweep(15 * 60_000)),
    reenqueued: await resumeRunning(system.sweep(15 * 60_000)),
  });
  const drain = () =>
    queue.drain(async (m) => {
      await runStep(system.step, StepMessage.parse(JSON.parse(m.body)));
    });
  return { clock, queue, system, sweep, recover, drain };
}

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];

describe("the sweep", () => {
  it("re-enqueues a running branch whose message was lost, once it has not moved for the step timeout", async () => {
    const { clock, queue, system, sweep, drain } = memoryWiring();
    const { task } = await system.tasks.create("acme", CreateTaskInput.parse({ plan }));
    // The first step's message is lost (received, then gone with its worker's batch).
    const [lost] = await queue.receive(1);
    await queue.delete(lost!.receiptHandle);
    expect(await sweep()).toEqual({
      reenqueued: 0,
      slots_freed: 0,
      starts_repaired: 0,
      expired: 0,
    });

    clock.time += 15 * 60_000 + 1;
    expect((await sweep()).reenqueued).toBe(1);
    await drain();
    expect((await system.tasks.get("acme", task.task_id)).status).toBe("completed");
    // A finished branch leaves the sweep index.
    clock.time += 60 * 60_000;
    expect((await sweep()).reenqueued).toBe(0);
  });

  it("leaves alone a branch that started long ago but moved recently", async () => {
    const { clock, queue, system, sweep } = memoryWiring();
    const twoSteps = [
      { seq_no: 0, type: "assign", parameters: { x: 1 } },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
    ];
    await system.tasks.create("acme", CreateTaskInput.parse({ plan: twoSteps }));
    clock.time += 20 * 60_000;
    const [first] = await queue.receive(1);
    await runStep(system.step, StepMessage.parse(JSON.parse(first!.body)));
    await queue.delete(first!.receiptHandle);
    // Its next message is lost too; the branch moved a moment ago, so it is not stalled yet.
    const [next] = await queue.receive(1);
    await queue.delete(next!.receiptHandle);
    expect((await sweep()).reenqueued).toBe(0);
    clock.time += 15 * 60_000 + 1;
    expect((await sweep()).reenqueued).toBe(1);
  });

  it("frees the running slot of a deleted task and starts the task that waited for it", async () => {
    const { clock, system, sweep, drain } = memoryWiring();
    const first = (await system.tasks.create("acme", CreateTaskInput.parse({ plan }))).task;
    const second = (await system.tasks.create("acme", CreateTaskInput.parse({ plan }))).task;
    expect((await system.tasks.get("acme", second.task_id)).status).toBe("queued");
    await system.tasks.delete("acme", first.task_id);
    await drain();
    clock.time += 15 * 60_000 + 1;
    expect((await sweep()).slots_freed).toBe(1);
    await drain();
    expect((await system.tasks.get("acme", second.task_id)).status).toBe("completed");
  });
});

describe("a task start", () => {
  const crashOn = (sk: string): Fault => ({ when: (w) => w === `put ${sk}`, kind: "crash" });
  const start = (system: ReturnType<typeof memoryWiring>["system"], key: string | null = null) =>
    system.tasks.create("acme", CreateTaskInput.parse({ plan }), undefined, key);
  /** Starts a task in the background that never returns (its process died). */
  const startDying = (system: ReturnType<typeof memoryWiring>["system"], key?: string) => {
    void start(system, key);
    return new Promise((resolve) => setTimeout(resolve, 20));
  };
  /** True when the tenant's one running slot is free: a new task runs to its end. */
  async function slotIsFree(wiring: ReturnType<typeof memoryWiring>): Promise<boolean> {
    const { task } = await start(wiring.system);
    await wiring.drain();
    return (await wiring.system.tasks.get("acme", task.task_id)).status === "completed";
  }

  it("refused for its size leaves no task and holds no slot", async () => {
    const wiring = memoryWiring();
    const big = [{ seq_no: 0, type: "assign", parameters: { final_answer: "x".repeat(300_000) } }];
    const refused = wiring.system.tasks.create("acme", CreateTaskInput.parse({ plan: big }));
    await expect(refused).rejects.toMatchObject({
      kind: "too_large",
      message: expect.stringMatching(/^the plan is \d+ bytes as JSON, over the limit of 262144/),
    });
    expect((await wiring.system.tasks.list("acme", { limit: 10 })).tasks).toEqual([]);
    expect(await slotIsFree(wiring)).toBe(true);
  });

  it("that fails after the task write is undone: no task, the slot freed", async () => {
    const wiring = memoryWiring([{ when: (w) => w === "put B#main", kind: "fail" }]);
    await expect(start(wiring.system)).rejects.toThrow(/unavailable/);
    expect((await wiring.system.tasks.list("acme", { limit: 10 })).tasks).toEqual([]);
    expect(await slotIsFree(wiring)).toBe(true);
  });

  it("cut short before its branch runs when retried with its Idempotency-Key", async () => {
    const wiring = memoryWiring([crashOn("B#main")]);
    await startDying(wiring.system, "order-1");
    const { task, replayed } = await start(wiring.system, "order-1");
    expect(replayed).toBe(true);
    await wiring.drain();
    expect((await wiring.system.tasks.get("acme", task.task_id)).status).toBe("completed");
  });

  it("cut short before its branch fails clearly at the sweep, and frees its slot", async () => {
    const wiring = memoryWiring([crashOn("B#main")]);
    await startDying(wiring.system);
    const [stuck] = (await wiring.system.tasks.list("acme", { limit: 10 })).tasks;
    expect(stuck?.status).toBe("queued");
    expect((await wiring.sweep()).starts_repaired).toBe(0);
    wiring.clock.time += 30_001;
    expect((await wiring.sweep()).starts_repaired).toBe(1);
    const failed = await wiring.system.tasks.get("acme", stuck!.task_id);
    expect(failed).toMatchObject({ status: "failed", error: expect.stringMatching(/not started/) });
    expect(await slotIsFree(wiring)).toBe(true);
  });

  it("cut short after its slot claim, before the task write, leaves nothing after the sweep", async () => {
    const wiring = memoryWiring([crashOn("TASK")]);
    await startDying(wiring.system);
    wiring.clock.time += 30_001;
    expect(await wiring.sweep()).toMatchObject({ starts_repaired: 1 });
    expect((await wiring.system.tasks.list("acme", { limit: 10 })).tasks).toEqual([]);
    expect(await slotIsFree(wiring)).toBe(true);
  });

  it("cut short before its first enqueue runs after the sweep", async () => {
    const wiring = memoryWiring();
    const send = wiring.queue.send.bind(wiring.queue);
    let crashed = false;
    wiring.queue.send = (...args) => {
      if (crashed) return send(...args);
      crashed = true;
      return new Promise(() => undefined);
    };
    await startDying(wiring.system);
    const [task] = (await wiring.system.tasks.list("acme", { limit: 10 })).tasks;
    wiring.clock.time += 30_001;
    expect((await wiring.sweep()).starts_repaired).toBe(1);
    await wiring.drain();
    expect((await wiring.system.tasks.get("acme", task!.task_id)).status).toBe("completed");
  });

  it("frees a slot held by a task that has no branch (written before this repair existed)", async () => {
    const wiring = memoryWiring();
    const { task } = await start(wiring.system);
    // What the old two-put start left: the task and its slot, without its branch.
    await wiring.system.ports.items.delete({ pk: `T#acme#K#${task.task_id}`, sk: "B#main" });
    await wiring.queue.receive(10);
    wiring.clock.time += 30_001;
    expect((await wiring.sweep()).slots_freed).toBe(1);
    expect((await wiring.system.tasks.get("acme", task.task_id)).status).toBe("failed");
    expect(await slotIsFree(wiring)).toBe(true);
  });
});

describe("a restart of the local stack", () => {
  const twoSteps = [
    { seq_no: 0, type: "assign", parameters: { x: 1 } },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
  ];

  it("re-enqueues at once a running branch whose step was lost, without waiting for the stall threshold", async () => {
    const { queue, system, recover, drain } = memoryWiring();
    const { task } = await system.tasks.create("acme", CreateTaskInput.parse({ plan: twoSteps }));
    const [first] = await queue.receive(1);
    await runStep(system.step, StepMessage.parse(JSON.parse(first!.body)));
    await queue.delete(first!.receiptHandle);
    // Killed between the commit and the enqueue of the next step: nothing is queued.
    for (const next of await queue.receive(10)) await queue.delete(next.receiptHandle);
    expect(await recover()).toMatchObject({ reenqueued: 1 });
    await drain();
    expect(await system.tasks.get("acme", task.task_id)).toMatchObject({
      status: "completed",
      final_answer: 1,
    });
  });

  it("undoes a fork whose first enqueue failed, so that the same fork can be made again", async () => {
    const wiring = memoryWiring();
    const { task } = await wiring.system.tasks.create(
      "acme",
      CreateTaskInput.parse({ plan: twoSteps }),
    );
    await wiring.drain();
    const commits = await wiring.system.branches.commits("acme", task.task_id, "main", 10, null);
    const fork = { from_commit: commits.commits.at(-1)!.commit_id, name: "again" };
    const send = wiring.queue.send.bind(wiring.queue);
    wiring.queue.send = () => Promise.reject(new Error("the queue is unavailable"));
    await expect(wiring.system.branches.fork("acme", task.task_id, fork)).rejects.toThrow(
      /unavailable/,
    );
    wiring.queue.send = send;
    // Nothing is left running without a step: the retry makes the fork and it runs.
    expect((await wiring.recover()).reenqueued).toBe(0);
    await wiring.system.branches.fork("acme", task.task_id, fork);
    await wiring.drain();
    expect(await wiring.system.branches.get("acme", task.task_id, "again")).toMatchObject({
      status: "completed",
    });
  });

  it("repairs a start cut short a moment ago, which the periodic sweep leaves for 30 s", async () => {
    const wiring = memoryWiring([{ when: (w) => w === "put B#main", kind: "crash" }]);
    void wiring.system.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await wiring.sweep()).starts_repaired).toBe(0);
    expect(await wiring.recover()).toMatchObject({ starts_repaired: 1 });
    const [task] = (await wiring.system.tasks.list("acme", { limit: 10 })).tasks;
    expect(task).toMatchObject({ status: "failed", error: expect.stringMatching(/not started/) });
  });
});
