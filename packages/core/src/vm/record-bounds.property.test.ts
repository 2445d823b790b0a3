/**
 * Every record stays within the store's limits (issue 22, item 3): the step
 * function runs plans that set arbitrary numbers of variables of arbitrary
 * sizes, and `llm_generate` calls that fill several 60 KB variables at once,
 * through the in-memory item store, which refuses what DynamoDB refuses
 * (`memory/item-rules.ts`, 400 KB an item). Every task completes with the
 * values it set, no item is over the limit, and the branch item holds no
 * value: it grows with the names, not with the sizes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CreateTaskInput } from "../service/task-input";
import { itemSize, MAX_ITEM_BYTES } from "../store/item-rules";
import { FakeLlm, memorySystem } from "../testing/memory-system";
import { loadVariables } from "./variables";

const KB = 1024;
const SEED = "s".repeat(KB);
const GENERATED = Object.fromEntries(["g0", "g1", "g2", "g3"].map((k) => [k, k.repeat(30 * KB)]));

/** One step: assign some variables (name from a small pool, size in KB), or an llm_generate. */
const stepArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(
      fc.record({ name: fc.integer({ min: 0, max: 11 }), kb: fc.integer({ min: 0, max: 300 }) }),
      { minLength: 1, maxLength: 6 },
    ),
  },
  { weight: 1, arbitrary: fc.constant("generate" as const) },
);

describe("records within the store's limits", () => {
  it("runs any mix of variable counts and sizes to completion with no record over 400 KB", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 10 }), async (steps) => {
        const sys = memorySystem({ llm: new FakeLlm(() => JSON.stringify(GENERATED)) });
        const expected: Record<string, unknown> = { seed: SEED };
        const plan: unknown[] = steps.map((step, i) => {
          if (step === "generate") {
            Object.assign(expected, GENERATED);
            return {
              seq_no: i,
              type: "calling",
              parameters: {
                tool_name: "llm_generate",
                tool_params: { prompt: "Write four drafts" },
                output_vars: ["g0", "g1", "g2", "g3"],
              },
            };
          }
          const parameters: Record<string, unknown> = {};
          for (const { name, kb } of step) {
            parameters[`v${name}`] = `${"${seed}".repeat(kb)}#${i}`;
            expected[`v${name}`] = `${SEED.repeat(kb)}#${i}`;
          }
          return { seq_no: i, type: "assign", parameters };
        });
        plan.push({ seq_no: steps.length, type: "assign", parameters: { final_answer: "done" } });
        const { task } = await sys.tasks.create(
          "acme",
          CreateTaskInput.parse({ plan, inputs: { seed: SEED } }),
        );
        await sys.drain();
        const got = await sys.tasks.get("acme", task.task_id);
        expect(got.error).toBeNull();
        expect(got.status).toBe("completed");

        const keys = await sys.store.listTaskItemKeys("acme", task.task_id);
        for (const key of keys) {
          const item = await sys.items.get(key);
          expect(itemSize(item!)).toBeLessThanOrEqual(MAX_ITEM_BYTES);
        }
        const branch = (await sys.store.getBranch("acme", task.task_id, "main"))!;
        // No value on the branch item: 12 names at most, however large their values.
        expect(branch.vars).toBeUndefined();
        const { plan: _plan, ...item } = branch;
        expect(itemSize(item as Record<string, unknown>)).toBeLessThan(4 * KB);
        const values = await loadVariables(sys.store, sys.blobs, branch);
        expect(values).toEqual({ ...expected, final_answer: "done" });
      }),
      { numRuns: 12 },
    );
  });
});
