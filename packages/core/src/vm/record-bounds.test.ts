/**
 * `record-bounds.ts`: a commit is moved part by part to the blob store until it
 * fits, and a commit the store refuses anyway fails its step at once (an error
 * commit that says what was too big, then a plan update or the end of the
 * branch), with nothing retried.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TooLargeError } from "../errors";
import { CreateTaskInput } from "../service/task-input";
import { itemSize, MAX_ITEM_BYTES } from "../store/item-rules";
import type { CommitRecord } from "../store/records";
import { loadValue } from "../store/values";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { FakeLlm, ManualClock, memorySystem } from "../testing/memory-system";
import { boundCommit, COMMIT_BYTES } from "./record-bounds";

const KB = 1024;

function commitWith(parts: Record<string, number>): CommitRecord {
  const text = (kb: number, c: string) => c.repeat(kb * KB);
  return {
    pk: "T#acme#K#t1",
    sk: "C#abcdefgh#00000004",
    commit_id: "abcdefgh-4",
    parent_id: "abcdefgh-3",
    branch: "main",
    bid: "abcdefgh",
    depth: 4,
    type: "step",
    seq_no: 3,
    instruction: { seq_no: 3, type: "assign", parameters: { x: text(parts.instruction!, "i") } },
    inputs: { x: text(parts.inputs!, "n") },
    outputs: { x: text(parts.outputs!, "o") },
    window: { old: text(parts.window!, "w") },
    window_ids: Object.fromEntries(
      Array.from({ length: parts.ids! * 40 }, (_, i) => [`name${i}`, `abcdefgh-${i}`]),
    ),
    chain: ["abcdefgh-0"],
    plan_commit: "abcdefgh-0",
    pc_before: 3,
    pc_after: 4,
    error: null,
    llm_calls: [],
    duration_ms: 1,
    details: { log: text(parts.details!, "d") },
    status_after: "running",
    created_at: "2026-11-27T00:00:00.000Z",
  };
}

describe("boundCommit", () => {
  it("brings any commit whose parts are each within their own limits under the store's", async () => {
    const part = fc.integer({ min: 0, max: 127 });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          instruction: part,
          inputs: part,
          outputs: fc.integer({ min: 0, max: 63 }),
          window: part,
          ids: fc.integer({ min: 0, max: 60 }),
          details: part,
        }),
        async (parts) => {
          const blobs = new MemoryBlobs({ clock: new ManualClock() });
          const commit = commitWith(parts);
          const bounded = await boundCommit(commit, blobs, "t/acme/t1");
          expect(itemSize(bounded as unknown as Record<string, unknown>)).toBeLessThanOrEqual(
            COMMIT_BYTES,
          );
          await new MemoryItemStore().put({ ...bounded }, { exists: false });
          for (const name of [
            "inputs",
            "window",
            "window_ids",
            "instruction",
            "details",
          ] as const) {
            expect(await loadValue(bounded[name], blobs, "t/acme/t1")).toEqual(commit[name]);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("leaves a commit that fits as it is", async () => {
    const commit = commitWith({
      instruction: 1,
      inputs: 1,
      outputs: 1,
      window: 1,
      ids: 1,
      details: 1,
    });
    const blobs = new MemoryBlobs({ clock: new ManualClock() });
    expect(await boundCommit(commit, blobs, "t/acme/t1")).toBe(commit);
  });
});

describe("a commit the store refuses", () => {
  const plan = [
    { seq_no: 0, type: "assign", parameters: { a: 1 } },
    { seq_no: 1, type: "assign", parameters: { b: "${a} + 1" } },
    { seq_no: 2, type: "assign", parameters: { final_answer: "${b}" } },
  ];

  /** A store that refuses the step commit at seq_no 1, as DynamoDB refuses an item over its limit. */
  function refusing(sys: ReturnType<typeof memorySystem>) {
    const put = sys.items.put.bind(sys.items);
    let refused = 0;
    Object.assign(sys.items, {
      put: async (item: Record<string, unknown>, condition?: unknown) => {
        if (item.type === "step" && Object.hasOwn(item.outputs as object, "b")) {
          refused++;
          throw new TooLargeError("a record would exceed the store's limit of 400 KB");
        }
        return put(item as never, condition as never);
      },
    });
    return () => refused;
  }

  it("fails the step at once with an error commit that says what was too big, and the task fails", async () => {
    const sys = memorySystem({ maxPlanUpdates: 0 });
    const refused = refusing(sys);
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got.status).toBe("failed");
    expect(got.error).toMatch(/over the store's limit of 409600 bytes/);
    expect(got.error).toMatch(/Make the step produce less at once/);
    // Tried once: no delivery came back for it.
    expect(refused()).toBe(1);
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits[0]).toMatchObject({
      type: "error",
      seq_no: 1,
      error: { code: "record_too_large" },
    });
    expect(sys.queue.pending()).toEqual([]);
  });

  it("takes the plan's error path when the branch has plan updates left", async () => {
    const llm = new FakeLlm(() =>
      JSON.stringify({
        reasoning: "set less at once",
        plan: [plan[0], { seq_no: 1, type: "assign", parameters: { final_answer: "recovered" } }],
        resume_at: 1,
      }),
    );
    const sys = memorySystem({ llm, maxPlanUpdates: 1 });
    refusing(sys);
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    const types = commits.map((c) => c.type).reverse();
    // plan, step 0, the refused step's error, then the plan update the error asked for.
    expect(types).toEqual(["plan", "step", "error", "plan_update", "step"]);
    expect(await sys.tasks.get("acme", task.task_id)).toMatchObject({
      status: "completed",
      final_answer: "recovered",
    });
    expect(MAX_ITEM_BYTES).toBe(400 * KB);
  });
});

describe("a refused step redelivered", () => {
  it("after its error commit was written but before the head moved: the same error commit is taken, one commit per parent", async () => {
    const plan = [
      { seq_no: 0, type: "assign", parameters: { a: 1 } },
      { seq_no: 1, type: "assign", parameters: { b: "${a} + 1" } },
      { seq_no: 2, type: "assign", parameters: { final_answer: "${b}" } },
    ];
    const sys = memorySystem({ maxPlanUpdates: 0 });
    const put = sys.items.put.bind(sys.items);
    const update = sys.items.update.bind(sys.items);
    let errorWritten = false;
    let crashed = 0;
    Object.assign(sys.items, {
      // DynamoDB checks an item's size before its condition: the redelivery's step
      // commit is refused again although the error commit holds its key.
      put: async (item: Record<string, unknown>, condition?: unknown) => {
        if (item.type === "step" && Object.hasOwn(item.outputs as object, "b")) {
          throw new TooLargeError("a record would exceed the store's limit of 400 KB");
        }
        await put(item as never, condition as never);
        if (item.type === "error") errorWritten = true;
      },
      // The worker dies once between the error commit and the head move.
      update: async (...args: Parameters<typeof update>) => {
        if (errorWritten && crashed === 0 && String(args[0].sk).startsWith("B#")) {
          crashed++;
          throw new Error("worker died");
        }
        return update(...args);
      },
    });
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    expect(crashed).toBe(1);
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got.status).toBe("failed");
    // The step's own cause, not the dead-letter queue's.
    expect(got.error).toMatch(/over the store's limit/);
    expect(got.error).not.toMatch(/dead-letter/);
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits.map((c) => c.type).reverse()).toEqual(["plan", "step", "error"]);
    expect(sys.queue.pending()).toEqual([]);
  });
});

describe("a TypeError at the commit write", () => {
  const plan = [
    { seq_no: 0, type: "assign", parameters: { a: 1 } },
    { seq_no: 1, type: "assign", parameters: { b: "${a} + 1" } },
    { seq_no: 2, type: "assign", parameters: { final_answer: "${b}" } },
  ];
  const isB = (item: Record<string, unknown>) =>
    item.type === "step" && Object.hasOwn(item.outputs as object, "b");

  it("from the store's rules (a value it cannot hold) fails the step at once with an error commit", async () => {
    const sys = memorySystem({ maxPlanUpdates: 0 });
    const put = sys.items.put.bind(sys.items);
    let refused = 0;
    // As `item-rules.ts` refuses a value in both adapters.
    Object.assign(sys.items, {
      put: async (item: Record<string, unknown>, condition?: unknown) => {
        if (isB(item)) {
          refused++;
          throw new TypeError("value.outputs.b: the number 1e-200 cannot be stored exactly");
        }
        return put(item as never, condition as never);
      },
    });
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    expect(refused).toBe(1);
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got.status).toBe("failed");
    expect(got.error).toMatch(/the store refused the step's commit: .*cannot be stored exactly/);
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits[0]).toMatchObject({
      type: "error",
      seq_no: 1,
      error: { code: "record_refused" },
    });
  });

  it("from a bug is no refusal: no error commit, the message is retried and the task goes on", async () => {
    const sys = memorySystem({ maxPlanUpdates: 0 });
    const store = sys.step.store;
    const putCommit = store.putCommit.bind(store);
    let bugs = 0;
    // A programming error on the way to the store, once: not the store refusing a value.
    store.putCommit = async (commit: CommitRecord) => {
      if (bugs === 0 && isB(commit as unknown as Record<string, unknown>)) {
        bugs++;
        const missing = undefined as unknown as { id: string };
        return void missing.id;
      }
      return putCommit(commit);
    };
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan }));
    await sys.drain();
    expect(bugs).toBe(1);
    const got = await sys.tasks.get("acme", task.task_id);
    expect(got.status).toBe("completed");
    const { commits } = await sys.branches.commits("acme", task.task_id, "main", 10, null);
    expect(commits.map((c) => c.type).reverse()).toEqual(["plan", "step", "step", "step"]);
  });
});
