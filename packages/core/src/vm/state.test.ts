import { describe, expect, it } from "vitest";
import type { Plan } from "../plan/schema";
import { CreateTaskInput } from "../service/task-input";
import { TaskStore } from "../store/task-store";
import { memorySystem } from "../testing/memory-system";
import { readState, stateValues } from "./state";

/** Ten steps, each setting four variables of 3 KB: the state grows to 40 of them. */
const wide: Plan = [
  ...Array.from({ length: 10 }, (_, s) => ({
    seq_no: s,
    type: "assign" as const,
    parameters: Object.fromEntries(
      Array.from({ length: 4 }, (_, k) => [`w${s * 4 + k}`, `${"x".repeat(3_000)}${s * 4 + k}`]),
    ),
  })),
  { seq_no: 10, type: "assign", parameters: { final_answer: "done" } },
];

async function ran(sys: ReturnType<typeof memorySystem>) {
  const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: wide }));
  await sys.drain();
  const main = (await sys.store.getBranch("acme", task.task_id, "main"))!;
  return { taskId: task.task_id, bid: main.bid };
}

describe("readState", () => {
  it("reads only a commit's head when the store keeps its views, and the same state as a cold store", async () => {
    const sys = memorySystem();
    const { taskId, bid } = await ran(sys);
    const at = `${bid}-6`;
    const cold = await readState(new TaskStore(sys.items), sys.blobs, "acme", taskId, at);
    sys.items.counts.get = 0;
    sys.items.counts.batchGet = 0;
    const warm = await readState(sys.store, sys.blobs, "acme", taskId, at);
    expect([sys.items.counts.get, sys.items.counts.batchGet]).toEqual([1, 0]);
    expect(warm.locations).toEqual(cold.locations);
    expect(warm.plan).toEqual(cold.plan);
    expect([warm.pc, warm.commit.depth, warm.commit.parent_id]).toEqual([6, 6, `${bid}-5`]);
    // Depth 0 is the plan; depth 6 ran seq_no 5: w0 to w23, each held once, by the commit that set it.
    const values = await stateValues(sys.store, warm);
    expect(Object.keys(values)).toHaveLength(24);
    expect(values.w23).toBe(`${"x".repeat(3_000)}23`);
    expect(warm.locations.w0).toBe(`${bid}-1`);
  });

  it("answers 404 for a commit of a deleted branch whose views it kept", async () => {
    const sys = memorySystem();
    const { taskId, bid } = await ran(sys);
    const fork = await sys.branches.fork("acme", taskId, {
      from_commit: `${bid}-3`,
      name: "again",
    });
    await sys.drain();
    const forkBid = (await sys.store.getBranch("acme", taskId, fork.name))!.bid;
    const own = `${forkBid}-5`;
    // The fork shares what came before it: w0 lives on main's commit still.
    const state = await sys.branches.state("acme", taskId, own);
    expect(Object.keys(state.variables)).toHaveLength(20);
    const stored = await readState(sys.store, sys.blobs, "acme", taskId, own);
    expect(stored.locations.w0).toBe(`${bid}-1`);
    expect(stored.locations.w11).toBe(`${bid}-3`);
    expect(stored.locations.w15).toBe(`${forkBid}-4`);

    await sys.branches.delete("acme", taskId, fork.name);
    await expect(sys.branches.state("acme", taskId, own)).rejects.toMatchObject({
      kind: "not_found",
    });
    await expect(sys.branches.diff("acme", taskId, own)).rejects.toMatchObject({
      kind: "not_found",
    });
    // Main's commits, which the fork shared, are still there.
    expect(
      Object.keys((await sys.branches.state("acme", taskId, `${bid}-3`)).variables),
    ).toHaveLength(12);
  });
});
