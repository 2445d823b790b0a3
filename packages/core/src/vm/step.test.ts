import { describe, expect, it } from "vitest";
import { ConflictError } from "../errors";
import type { Plan } from "../plan/schema";
import { CreateTaskInput } from "../service/task-input";
import { TaskStore } from "../store/task-store";
import { isStoredRef, loadValue, taskBlobPrefix } from "../store/values";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { StepMessage } from "./message";
import { readState, stateValues } from "./state";
import { runStep } from "./step";

const countdown: Plan = [
  { seq_no: 0, type: "assign", parameters: { n: 3, total: 0 } },
  { seq_no: 1, type: "assign", parameters: { total: "${total} + ${n}" } },
  { seq_no: 2, type: "jmp", parameters: { target_seq: 4 } },
  { seq_no: 3, type: "assign", parameters: { total: 100 } },
  { seq_no: 4, type: "assign", parameters: { final_answer: "total is ${total}" } },
];

async function start(sys: ReturnType<typeof memorySystem>, plan: unknown, inputs = {}) {
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan, inputs }));
  return task.task_id;
}

describe("runStep", () => {
  it("runs a plan of assign and jmp to its final answer, one commit per instruction", async () => {
    const sys = memorySystem();
    const taskId = await start(sys, countdown);
    await sys.drain();
    const task = await sys.tasks.get("acme", taskId);
    expect(task.status).toBe("completed");
    expect(task.final_answer).toBe("total is 3");
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    expect(commits.map((c) => [c.type, c.seq_no])).toEqual([
      ["step", 4],
      ["step", 2],
      ["step", 1],
      ["step", 0],
      ["plan", null],
    ]);
    // Four instructions ran; the plan commit is not a step.
    expect(task.usage.steps).toBe(4);
  });

  it("tells the onCommit hook of every commit that became a head, once", async () => {
    const sys = memorySystem();
    const seen: string[] = [];
    sys.step.onCommit = (commit) => seen.push(commit.commit_id);
    const taskId = await start(sys, countdown);
    await sys.drain();
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    expect(seen).toEqual(commits.map((c) => c.commit_id).reverse());
  });

  it("fails a branch that runs past the end without final_answer", async () => {
    const sys = memorySystem();
    const taskId = await start(sys, [
      { seq_no: 0, type: "assign", parameters: { final_answer: "x" } },
    ]);
    // A plan that passes validation always reaches final_answer; force the case through a fork.
    await sys.drain();
    const branch = await sys.store.getBranch("acme", taskId, "main");
    await sys.store.updateBranch("acme", taskId, "main", {
      set: [
        [["status"], "running"],
        [["pc"], 0],
        [["plan"], [{ seq_no: 0, type: "assign", parameters: { x: 1 } }]],
        // A plan no commit set: `plan_commit` names the commit a step takes the plan from.
        [["plan_commit"], null],
      ],
    });
    await runStep(sys.step, {
      v: 1,
      kind: "step",
      tenant_id: "acme",
      task_id: taskId,
      branch: "main",
      head: branch!.head,
    });
    const after = await sys.store.getBranch("acme", taskId, "main");
    expect(after!.status).toBe("failed");
    expect(after!.error).toMatch(/ran past the end of the plan/);
  });

  it("lets only one of two workers racing the same step commit and move the head", async () => {
    const sys = memorySystem();
    const taskId = await start(sys, countdown);
    const [first] = await sys.queue.receive(1);
    const message = StepMessage.parse(JSON.parse(first!.body));
    const outcomes = await Promise.all([runStep(sys.step, message), runStep(sys.step, message)]);
    await sys.queue.delete(first!.receiptHandle);
    const kinds = outcomes.map((o) => o.outcome).sort();
    expect(kinds).toContain("committed");
    expect(kinds.filter((k) => k === "committed")).toHaveLength(1);
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    expect(commits).toHaveLength(1);
    const branch = await sys.store.getBranch("acme", taskId, "main");
    expect(branch!.head).toBe(commits[0]!.commit_id);
    expect(
      sys.queue.sent.filter((s) => (s.body as StepMessage).head === branch!.head),
    ).toHaveLength(1);
  });

  it("repairs a crash between the commit write and the head move on the next attempt", async () => {
    const sys = memorySystem();
    const taskId = await start(sys, countdown);
    const [first] = await sys.queue.receive(1);
    const message = StepMessage.parse(JSON.parse(first!.body));
    const realUpdate = sys.items.update.bind(sys.items);
    let crashed = false;
    sys.items.update = async (key, changes, condition) => {
      if (!crashed && key.sk === "B#main") {
        crashed = true;
        throw new Error("worker died");
      }
      return realUpdate(key, changes, condition);
    };
    await expect(runStep(sys.step, message)).rejects.toThrow("worker died");
    const stuck = await sys.store.getBranch("acme", taskId, "main");
    expect(stuck!.head).toBeNull();
    const again = await runStep(sys.step, message);
    expect(again.outcome).toBe("repaired");
    await sys.queue.delete(first!.receiptHandle);
    const branch = await sys.store.getBranch("acme", taskId, "main");
    expect(branch!.head).not.toBeNull();
    await sys.drain();
    const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
    expect(commits).toHaveLength(5);
    expect((await sys.tasks.get("acme", taskId)).final_answer).toBe("total is 3");
  });

  it("resumes a branch whose next step was never enqueued", async () => {
    const sys = memorySystem();
    const taskId = await start(sys, countdown);
    const [first] = await sys.queue.receive(1);
    const message = StepMessage.parse(JSON.parse(first!.body));
    const realSend = sys.queue.send.bind(sys.queue);
    sys.queue.send = async () => {
      throw new Error("crash before enqueue");
    };
    await expect(runStep(sys.step, message)).rejects.toThrow("crash before enqueue");
    sys.queue.send = realSend;
    // SQS redelivers the same message: it is now a duplicate of the head's parent.
    const outcome = await runStep(sys.step, message);
    expect(outcome.outcome).toBe("resumed");
    await sys.queue.delete(first!.receiptHandle);
    await sys.drain();
    expect((await sys.tasks.get("acme", taskId)).status).toBe("completed");
  });

  it("stores a 1 MiB output in the blob store by reference and reads it back whole", async () => {
    const sys = memorySystem();
    const big = "x".repeat(1024 * 1024);
    const taskId = await start(
      sys,
      [
        { seq_no: 0, type: "assign", parameters: { copy: "${big}" } },
        { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
      ],
      { big },
    );
    await sys.drain();
    const branch = await sys.store.getBranch("acme", taskId, "main");
    // The branch names where the value lives; the commit that set it holds a reference.
    expect(branch!.vars).toBeUndefined();
    expect(branch!.var_depth).toBeUndefined();
    const state = await readState(sys.store, sys.blobs, "acme", taskId, branch!.head!);
    expect(state.locations.copy).toBe(`${branch!.bid}-1`);
    const stored = await stateValues(sys.store, state);
    expect(isStoredRef(stored.copy)).toBe(true);
    const value = await loadValue(stored.copy, sys.blobs, taskBlobPrefix("acme", taskId));
    expect(value).toBe(big);
    const commit = await sys.branches.commit("acme", taskId, `${branch!.bid}-1`);
    expect(commit.outputs.copy).toMatchObject({ $ref: "s3", size: big.length + 2 });
  });

  it("reads the state at the newest and the oldest of 1,000 commits in two store calls, one when it kept their views", async () => {
    const sys = memorySystem({
      llm: new FakeLlm(() => '{"result": true, "explanation": "keep going"}'),
    });
    const plan: Plan = [
      { seq_no: 0, type: "assign", parameters: { i: 0 } },
      { seq_no: 1, type: "assign", parameters: { i: "${i} + 1" } },
      {
        seq_no: 2,
        type: "jmp",
        parameters: { condition_prompt: "again?", jump_if_true: 1, jump_if_false: 3 },
      },
    ];
    const { task } = await sys.tasks.create(
      "acme",
      CreateTaskInput.parse({
        plan: [...plan, { seq_no: 3, type: "assign", parameters: { final_answer: 1 } }],
        // The plan commit and 999 instructions, then the budget's error commit: 1,001 commits.
        budget: { max_steps: 999 },
      }),
    );
    await sys.drain();
    const branch = await sys.store.getBranch("acme", task.task_id, "main");
    expect(branch!.status).toBe("failed");
    expect(branch!.error).toMatch(/max_steps budget spent: 999 of 999/);
    expect(branch!.depth).toBe(1000);
    for (const depth of [1000, 999, 1, 2, 500, 512]) {
      // A process that has not seen the history (an API instance, a cold worker):
      // the commit's head, then its own and its chain's views in one batch.
      const cold = new TaskStore(sys.items);
      for (const [store, reads] of [
        [cold, 2],
        [sys.store, 1],
      ] as const) {
        sys.items.counts.get = 0;
        sys.items.counts.batchGet = 0;
        const state = await readState(
          store,
          sys.blobs,
          "acme",
          task.task_id,
          `${branch!.bid}-${depth}`,
        );
        // The process that ran the task keeps its commits' views: only the head is read,
        // which says that the commit still exists.
        expect((sys.items.counts.get ?? 0) + (sys.items.counts.batchGet ?? 0)).toBe(reads);
        // Depth 1 sets i = 0, then even depths add one (odd ones are jumps); 1000 is the budget error.
        const values = await stateValues(store, state);
        expect(values.i).toBe(Math.floor(Math.min(depth, 999) / 2));
      }
    }
  });

  it("refuses to write a second commit for the same parent", async () => {
    const sys = memorySystem();
    const taskId = await start(sys, countdown);
    await sys.drain();
    const branch = await sys.store.getBranch("acme", taskId, "main");
    const commit = await sys.store.getCommit("acme", taskId, branch!.head!);
    await expect(sys.store.putCommit(commit!)).rejects.toBeInstanceOf(ConflictError);
  });
});
