import { describe, expect, it } from "vitest";
import { integrateSystem } from "../testing/integrate-system";
import { CreateTaskInput } from "./task-input";

const DAY_MS = 86_400_000;

/** A plan whose second step fails (the LLM's answer is no JSON), so a retry has a step to run. */
const FAILING = [
  { seq_no: 0, type: "assign", parameters: { n: 1 } },
  {
    seq_no: 1,
    type: "jmp",
    parameters: { condition_prompt: "Go on?", jump_if_true: 2, jump_if_false: 2 },
  },
  { seq_no: 2, type: "assign", parameters: { final_answer: "done" } },
];

describe("a retry's Idempotency-Key", () => {
  it("after its 24 hours, with another body, makes a new run instead of replaying the old one", async () => {
    const sys = integrateSystem();
    const { task } = await sys.tasks.create("acme", CreateTaskInput.parse({ plan: FAILING }));
    await sys.drain();
    const first = await sys.retries.retry("acme", task.task_id, { from: "start" }, "nightly");
    expect(first.replayed).toBe(false);
    await sys.drain();
    // Within the day, the same key and body is the same run.
    const again = await sys.retries.retry("acme", task.task_id, { from: "start" }, "nightly");
    expect(again).toMatchObject({ replayed: true, branch: { name: first.branch.name } });

    sys.clock.advance(DAY_MS + 1000);
    const later = await sys.retries.retry("acme", task.task_id, { from: "last_commit" }, "nightly");
    expect(later.replayed).toBe(false);
    expect(later.branch.name).not.toBe(first.branch.name);
    await sys.drain();
    const names = (await sys.store.listBranches("acme", task.task_id)).map((b) => b.name);
    expect(names).toContain(later.branch.name);
  });
});
