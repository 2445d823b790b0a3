/**
 * The plan lives on the commit that set it, once per plan version; the branch item
 * only names that commit (`plan_commit`), so a step's head move rewrites a small item.
 */
import { describe, expect, it } from "vitest";
import type { Plan } from "../plan/schema";
import { CreateTaskInput } from "../service/task-input";
import { memorySystem } from "../testing/memory-system";
import { StepMessage } from "../vm/message";
import { runStep } from "../vm/step";
import { branchKey } from "./keys";
import { TaskStore } from "./task-store";

const plan: Plan = [
  { seq_no: 0, type: "assign", parameters: { a: 1 } },
  { seq_no: 1, type: "assign", parameters: { b: "${a} + 1" } },
  { seq_no: 2, type: "assign", parameters: { c: "${b} + 1" } },
  { seq_no: 3, type: "assign", parameters: { final_answer: "c is ${c}" } },
];

async function start(sys: ReturnType<typeof memorySystem>) {
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
  return task.task_id;
}

describe("the plan off the branch item", () => {
  it("keeps the plan on the branch only until its plan commit, then names that commit", async () => {
    const sys = memorySystem();
    const taskId = await start(sys);
    const key = branchKey("acme", taskId, "main");
    expect((await sys.items.get(key))!.plan).toEqual(plan);
    await sys.drain();
    const item = (await sys.items.get(key))!;
    expect(item).not.toHaveProperty("plan");
    expect(item.plan_commit).toMatch(/-0$/);
    expect((await sys.tasks.get("acme", taskId)).final_answer).toBe("c is 3");
    // The API's view of the branch still shows the plan.
    expect((await sys.branches.get("acme", taskId, "main")).state.plan).toEqual(plan);
  });

  it("reads the plan from its commit in a worker that has not seen it (a cold start)", async () => {
    const sys = memorySystem();
    const taskId = await start(sys);
    const [first] = await sys.queue.receive(1);
    await runStep(sys.step, StepMessage.parse(JSON.parse(first!.body)));
    await sys.queue.delete(first!.receiptHandle);
    const cold = new TaskStore(sys.items);
    const branch = await cold.getBranch("acme", taskId, "main");
    expect(branch!.plan).toEqual(plan);
    // Once read, the plan is kept: the next read of the branch is one item read.
    const before = sys.items.counts.get ?? 0;
    await cold.getBranch("acme", taskId, "main");
    expect((sys.items.counts.get ?? 0) - before).toBe(1);
  });

  it("makes one read and two writes for an ordinary step, none of them the plan", async () => {
    const sys = memorySystem();
    const taskId = await start(sys);
    const [first] = await sys.queue.receive(1);
    await runStep(sys.step, StepMessage.parse(JSON.parse(first!.body)));
    await sys.queue.delete(first!.receiptHandle);
    const [second] = await sys.queue.receive(1);
    const counts = { ...sys.items.counts };
    const delta = (name: string) => (sys.items.counts[name] ?? 0) - (counts[name] ?? 0);
    const written: Array<Record<string, unknown>> = [];
    const realUpdate = sys.items.update.bind(sys.items);
    sys.items.update = async (k, changes, condition, options) => {
      written.push(changes as Record<string, unknown>);
      return realUpdate(k, changes, condition, options);
    };
    expect((await runStep(sys.step, StepMessage.parse(JSON.parse(second!.body)))).outcome).toBe(
      "committed",
    );
    expect(delta("get") + delta("batchGet") + delta("query")).toBe(1);
    // The wrapper above is counted as well as the store's own update: count its calls.
    expect(delta("put") + written.length).toBe(2);
    expect(JSON.stringify(written)).not.toContain('"plan"');
    const item = (await sys.items.get(branchKey("acme", taskId, "main")))!;
    expect(item).not.toHaveProperty("plan");
  });

  it("gives a fork with a new plan a new plan commit, and leaves the forked branch on its own", async () => {
    const sys = memorySystem();
    const taskId = await start(sys);
    await sys.drain();
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    const atB = commits.find((c) => c.seq_no === 1)!;
    const other: Plan = [
      { seq_no: 2, type: "assign", parameters: { c: "${b} * 10" } },
      { seq_no: 3, type: "assign", parameters: { final_answer: "c is now ${c}" } },
    ];
    await sys.branches.fork("acme", taskId, {
      from_commit: atB.commit_id,
      name: "other",
      plan: other,
    });
    const forkItem = (await sys.items.get(branchKey("acme", taskId, "other")))!;
    expect(forkItem.plan ?? null).toBeNull();
    await sys.drain();
    const fork = await sys.store.getBranch("acme", taskId, "other");
    expect(fork!.final_answer).toBe("c is now 20");
    expect(fork!.plan).toEqual(other);
    const main = await sys.store.getBranch("acme", taskId, "main");
    expect(fork!.plan_commit).not.toBe(main!.plan_commit);
    expect((await sys.items.get(branchKey("acme", taskId, "other")))!.plan ?? null).toBeNull();
    // The main branch's plan version is untouched, in this store and in a cold one.
    expect((await sys.store.getBranch("acme", taskId, "main"))!.plan).toEqual(plan);
    expect((await new TaskStore(sys.items).getBranch("acme", taskId, "main"))!.plan).toEqual(plan);
    // A second tenant does not see the branch, plan or not.
    expect(await sys.store.getBranch("other-tenant", taskId, "main")).toBeNull();
  });

  it("reads a commit's state and a diff with the plan from its plan commit, kept once read", async () => {
    const sys = memorySystem();
    const taskId = await start(sys);
    await sys.drain();
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    const [head, , atB] = commits;
    const state = await sys.branches.state("acme", taskId, atB!.commit_id);
    expect(state.plan).toEqual(plan);
    expect(state.variables).toEqual({ a: 1, b: 2 });
    const same = await sys.branches.diff("acme", taskId, head!.commit_id, atB!.commit_id);
    expect(same.plan_changed).toBe(false);
    expect(same.added).toEqual({ c: 3, final_answer: "c is 3" });
    const other: Plan = [{ seq_no: 2, type: "assign", parameters: { final_answer: "other" } }];
    await sys.branches.fork("acme", taskId, {
      from_commit: atB!.commit_id,
      name: "o",
      plan: other,
    });
    await sys.drain();
    const forkHead = (await sys.store.getBranch("acme", taskId, "o"))!.head!;
    const changed = await sys.branches.diff("acme", taskId, forkHead, atB!.commit_id);
    expect(changed.plan_changed).toBe(true);
    expect((await sys.branches.state("acme", taskId, forkHead)).plan).toEqual(other);
  });
});
