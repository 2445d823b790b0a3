// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assign, branch, call, context, done, expectValid, jump } from "../testing/plan-fixtures";
import { type ValidationResult, validatePlan } from "./validate";

describe("validatePlan on generated input", () => {
  describe("never throws", () => {
    const wellFormed = (result: ValidationResult) => {
      const listed = result.ok ? result.warnings : [...result.problems, ...result.warnings];
      for (const p of listed) {
        expect(typeof p.code).toBe("string");
        expect(p.message.length).toBeGreaterThan(0);
        expect(p.hint.length).toBeGreaterThan(0);
        expect(p.seq_no === null || Number.isInteger(p.seq_no)).toBe(true);
      }
      if (!result.ok) expect(result.problems.length).toBeGreaterThan(0);
    };

    it("on any JSON value", () => {
      fc.assert(
        fc.property(fc.jsonValue(), (input) => wellFormed(validatePlan(input, context))),
        { numRuns: 500 },
      );
    });

    it("on arrays of instruction-like objects", () => {
      const instruction = fc.record(
        {
          seq_no: fc.oneof(fc.nat({ max: 6 }), fc.jsonValue()),
          type: fc.oneof(fc.constantFrom("assign", "calling", "jmp", "reasoning"), fc.jsonValue()),
          parameters: fc.oneof(
            fc.dictionary(
              fc.constantFrom(
                "tool_name",
                "tool_params",
                "output_vars",
                "target_seq",
                "jump_if_true",
                "condition_prompt",
                "final_answer",
                "x",
              ),
              fc.oneof(
                fc.jsonValue(),
                fc.constantFrom("${x}", "${final_answer.0}", "llm_generate", ["x", "y"]),
                fc.nat({ max: 6 }),
              ),
            ),
            fc.jsonValue(),
          ),
        },
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(fc.array(instruction, { maxLength: 8 }), (input) =>
          wellFormed(validatePlan(input, context)),
        ),
        { numRuns: 500 },
      );
    });

    it("on mutations of valid plans", () => {
      const base = [
        { seq_no: 0, type: "reasoning", parameters: { chain_of_thoughts: "c" } },
        call(1, "llm_generate", { prompt: "About ${topic}", context: "c" }, ["facts"]),
        branch(2, "Dated? ${facts}", 3, 5),
        call(
          3,
          "run_code",
          { language: "python", code: "print(1)", inputs: { f: "${facts}" } },
          "out",
        ),
        jump(4, 6),
        assign(5, { out: "${facts} + 1" }),
        done(6, "${out}"),
      ];
      expectValid(validatePlan(base, context));
      const mutation = fc.tuple(fc.nat(), fc.oneof(fc.jsonValue(), fc.constant(undefined)));
      fc.assert(
        fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
          const plan = structuredClone(base);
          for (const [pick, value] of mutations) mutate(plan, pick, value);
          wellFormed(validatePlan(plan, context));
        }),
        { numRuns: 500 },
      );
    });

    it("on deep nesting and large input", () => {
      let deep: unknown = "${x}";
      for (let i = 0; i < 100_000; i += 1) deep = { a: [deep] };
      const huge = Array.from({ length: 5_000 }, (_, i) =>
        assign(i, { [`v${i}`]: `\${v${i - 1}}` }),
      );
      for (const input of [
        [done(0, deep)],
        [call(0, "llm_generate", deep)],
        deep,
        huge,
        ["${x}".repeat(100_000)],
      ]) {
        wellFormed(validatePlan(input, context));
      }
    });
  });

  it("accepts generated straight-line plans that only use what is set before", () => {
    const step = fc.record({ name: fc.constantFrom("a", "b", "c", "d"), uses: fc.nat() });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const set = ["topic"];
        const plan = steps.map(({ name, uses }, i) => {
          const value = `\${${set[uses % set.length]}}!`;
          set.push(name);
          return assign(i, { [name]: value });
        });
        plan.push(done(plan.length, `\${${set.at(-1)}}`));
        expectValid(validatePlan(plan, context));
      }),
    );
  });
});

/** Replaces (or, with undefined, deletes) one value, chosen by `pick`, anywhere in `root`. */
function mutate(root: unknown, pick: number, value: unknown): void {
  const slots: [Record<string | number, unknown>, string | number][] = [];
  const walk = (node: unknown) => {
    if (node === null || typeof node !== "object") return;
    for (const key of Object.keys(node)) {
      const k = Array.isArray(node) ? Number(key) : key;
      slots.push([node as Record<string | number, unknown>, k]);
      walk((node as Record<string, unknown>)[key]);
    }
  };
  walk(root);
  const slot = slots[pick % slots.length];
  if (!slot) return;
  const [parent, key] = slot;
  if (value === undefined && !Array.isArray(parent)) delete parent[key];
  else parent[key] = value;
}
