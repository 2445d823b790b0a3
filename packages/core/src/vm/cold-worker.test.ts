/**
 * Issue 22's step protocol under the deliveries SQS makes: a worker whose
 * `TaskStore` has kept no commit views (a cold Lambda) takes every step, each
 * message comes twice at once, and every third step's first worker dies between
 * its commit and its head move. The branch ends with one commit per parent and
 * the same state, diff and fork as an undisturbed run.
 */
import { describe, expect, it } from "vitest";
import { BranchService } from "../service/branches";
import { CreateTaskInput } from "../service/task-input";
import { TaskStore } from "../store/task-store";
import { memorySystem } from "../testing/memory-system";
import { StepMessage } from "./message";
import { runStep } from "./step";

const BIG = "z".repeat(90_000);
const plan = [
  { seq_no: 0, type: "assign", parameters: { v0: 0, big: BIG } },
  ...Array.from({ length: 22 }, (_, i) => ({
    seq_no: i + 1,
    type: "assign",
    parameters: { [`v${(i + 1) % 7}`]: `\${v${i % 7}} + 1` },
  })),
  { seq_no: 23, type: "assign", parameters: { final_answer: "${v1} ${v2} ${big}" } },
];

async function run(disturbed: boolean) {
  const sys = memorySystem();
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
  let n = 0;
  const realUpdate = sys.items.update.bind(sys.items);
  let crashNext = false;
  sys.items.update = async (key, changes, condition, options) => {
    if (crashNext && key.sk === "B#main") {
      crashNext = false;
      throw new Error("worker died");
    }
    return realUpdate(key, changes, condition, options);
  };
  await sys.queue.drain(async (delivered) => {
    const message = StepMessage.parse(JSON.parse(delivered.body));
    if (!disturbed) {
      await runStep(sys.step, message);
      return;
    }
    n++;
    // Each worker here is cold: a store that has seen no commit of the task.
    const cold = () => ({ ...sys.step, store: new TaskStore(sys.items) });
    if (n % 3 === 0) {
      crashNext = true;
      await expect(runStep(cold(), message)).rejects.toThrow("worker died");
    }
    await Promise.all([runStep(cold(), message), runStep(cold(), message)]);
  });
  return { sys, taskId: task.task_id };
}

async function read(sys: ReturnType<typeof memorySystem>, taskId: string, store?: TaskStore) {
  const branches = store
    ? new BranchService({
        store,
        blobs: sys.blobs,
        queue: sys.queue,
        clock: sys.clock,
        presenter: (sys.branches as unknown as { deps: { presenter: never } }).deps.presenter,
        tasks: sys.tasks.reads,
        checks: sys.tasks.checks,
        admission: sys.tasks.admission,
      })
    : sys.branches;
  const { commits } = await branches.commits("acme", taskId, "main", 100, null);
  const ids = commits.map((c) => c.commit_id).reverse();
  const at = (i: number) => ids[i]!;
  const states = [];
  for (const i of [1, 5, 12, ids.length - 2, ids.length - 1]) {
    states.push(await branches.state("acme", taskId, at(i)));
    states.push(await branches.diff("acme", taskId, at(i), at(Math.max(0, i - 4))));
  }
  const forked = await branches.fork("acme", taskId, { from_commit: at(9), name: "again" });
  return { commits, states, forked, branches };
}

describe("cold, doubled and crashing workers", () => {
  it("leave one commit per parent and the state of an undisturbed run", async () => {
    const warm = await run(false);
    const rough = await run(true);
    const task = await rough.sys.tasks.get("acme", rough.taskId);
    expect(task.status).toBe("completed");
    // Values are shown with URLs that name their task: compare with the ids taken out.
    const norm = (value: unknown, taskId: string) =>
      JSON.parse(JSON.stringify(value).replaceAll(taskId, "TASK"));
    expect(norm(task.final_answer, rough.taskId)).toEqual(
      norm((await warm.sys.tasks.get("acme", warm.taskId)).final_answer, warm.taskId),
    );

    const a = await read(warm.sys, warm.taskId);
    // Read and forked by a cold store as well.
    const b = await read(rough.sys, rough.taskId, new TaskStore(rough.sys.items));
    expect(b.commits).toHaveLength(a.commits.length);
    expect(new Set(b.commits.map((c) => c.parent_id)).size).toBe(b.commits.length);
    expect(norm(b.states, rough.taskId)).toEqual(norm(a.states, warm.taskId));

    // The forks run, each on its own queue, to the same answer.
    await warm.sys.drain();
    await rough.sys.drain();
    const fa = await warm.sys.branches.get("acme", warm.taskId, "again");
    const fb = await rough.sys.branches.get("acme", rough.taskId, "again");
    expect(fb.status).toBe("completed");
    expect(norm(fb.state, rough.taskId)).toEqual(norm(fa.state, warm.taskId));
    expect(rough.sys.queue.pending()).toEqual([]);
  });
});
