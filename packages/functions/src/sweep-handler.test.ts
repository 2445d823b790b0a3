import {
  CreateTaskInput,
  loadLlmConfig,
  MemoryBlobs,
  MemoryItemStore,
  MemoryQueue,
  runStep,
  StepMessage,
  silentLog,
} from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { createSweepHandler } from "./sweep-handler";
import { createSystem } from "./system";
import { unconfiguredLlm } from "./unconfigured-llm";

/** The real wiring over the in-memory adapters, with a clock the test moves. */
function memoryWiring() {
  const clock = { time: Date.parse("2026-01-01T00:00:00Z"), now: () => clock.time };
  const queue = new MemoryQueue({ clock });
  const system = createSystem(
    {
      items: new MemoryItemStore(),
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
      adminKey: null,
      publicUrl: null,
      maxPlanUpdates: 1,
      planRepairs: 1,
      maxBodyBytes: 1024 * 1024,
      quotas: { max_running_tasks: 1 },
    },
  );
  const sweep = createSweepHandler({
    items: system.ports.items,
    queue,
    clock,
    log: silentLog,
    slots: system.slots,
    stalledMs: 15 * 60_000,
  });
  const drain = () =>
    queue.drain(async (m) => {
      await runStep(system.step, StepMessage.parse(JSON.parse(m.body)));
    });
  return { clock, queue, system, sweep, drain };
}

const plan = [{ seq_no: 0, type: "assign", parameters: { final_answer: "done" } }];

describe("the sweep", () => {
  it("re-enqueues a running branch whose message was lost, once it has not moved for the step timeout", async () => {
    const { clock, queue, system, sweep, drain } = memoryWiring();
    const { task } = await system.tasks.create("acme", CreateTaskInput.parse({ plan }));
    // The first step's message is lost (received, then gone with its worker's batch).
    const [lost] = await queue.receive(1);
    await queue.delete(lost!.receiptHandle);
    expect(await sweep()).toEqual({ reenqueued: 0, slots_freed: 0 });

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
