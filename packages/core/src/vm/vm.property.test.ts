import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Instruction } from "../plan/schema";
import { CreateTaskInput } from "../service/task-input";
import { FakeLlm, memorySystem } from "../testing/memory-system";

/** Random programs of assigns and jumps (plain and conditional) that end in final_answer. */
const program = fc
  .integer({ min: 1, max: 8 })
  .chain((n) =>
    fc.tuple(
      fc.array(
        fc.oneof(
          fc.record({
            kind: fc.constant("assign" as const),
            value: fc.integer({ min: -5, max: 5 }),
          }),
          fc.record({ kind: fc.constant("jmp" as const), target: fc.integer({ min: 0, max: n }) }),
          fc.record({
            kind: fc.constant("cond" as const),
            yes: fc.integer({ min: 0, max: n }),
            no: fc.integer({ min: 0, max: n }),
          }),
        ),
        { minLength: n, maxLength: n },
      ),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
      fc.integer({ min: 3, max: 40 }),
    ),
  )
  .map(([ops, answers, maxSteps]) => {
    const plan: Instruction[] = ops.map((op, i): Instruction => {
      if (op.kind === "assign")
        return { seq_no: i, type: "assign", parameters: { [`v${i}`]: op.value } };
      if (op.kind === "jmp")
        return { seq_no: i, type: "jmp", parameters: { target_seq: op.target } };
      return {
        seq_no: i,
        type: "jmp",
        parameters: { condition_prompt: `step ${i}?`, jump_if_true: op.yes, jump_if_false: op.no },
      };
    });
    plan.push({ seq_no: ops.length, type: "assign", parameters: { final_answer: "end" } });
    return { plan, answers, maxSteps };
  });

describe("the VM on generated plans", () => {
  it("always ends within its budget and never writes two commits for one parent", async () => {
    await fc.assert(
      fc.asyncProperty(program, async ({ plan, answers, maxSteps }) => {
        let i = 0;
        const llm = new FakeLlm(() =>
          JSON.stringify({ result: answers[i++ % answers.length], explanation: "generated" }),
        );
        const sys = memorySystem({ llm });
        let taskId: string;
        try {
          const { task } = await sys.tasks.create(
            "acme",
            CreateTaskInput.parse({ plan, budget: { max_steps: maxSteps } }),
          );
          taskId = task.task_id;
        } catch (error) {
          // Plans the validator refuses (e.g. final_answer unreachable) are not "valid plans".
          fc.pre((error as { code?: string }).code !== "invalid_plan");
          throw error;
        }
        const drained = await sys.drain();
        expect(drained.failed).toBe(0);
        const branch = (await sys.store.getBranch("acme", taskId, "main"))!;
        expect(["completed", "failed"]).toContain(branch.status);
        if (branch.status === "failed") expect(branch.error).toMatch(/max_steps budget spent/);
        expect(branch.usage.steps).toBeLessThanOrEqual(maxSteps + 1);
        const { commits } = await sys.branches.commits("acme", taskId, "main", 100, null);
        expect(commits).toHaveLength(branch.depth + 1);
        const parents = commits.map((c) => c.parent_id);
        expect(new Set(parents).size).toBe(parents.length);
        expect(new Set(commits.map((c) => c.commit_id)).size).toBe(commits.length);
      }),
      { numRuns: 60 },
    );
  });
});
