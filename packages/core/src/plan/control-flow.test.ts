// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import { describe, expect, it } from "vitest";
import {
  assign,
  branch,
  call,
  context,
  done,
  expectValid,
  jump,
  problemsOf,
  theProblem,
} from "../testing/plan-fixtures";
import { validatePlan } from "./validate";

describe("validatePlan over the control flow", () => {
  describe("check 4: references", () => {
    it("accepts task inputs and paths into set variables", () => {
      const plan = [assign(0, { facts: [{ title: "t" }] }), done(1, "${topic}: ${facts.0.title}")];
      expectValid(validatePlan(plan, context));
    });

    it("refuses a variable that is set only later", () => {
      const plan = [assign(0, { a: "${b}" }), assign(1, { b: 1 }), done(2, "${a}")];
      const problem = theProblem(validatePlan(plan, context), "unassigned_variable");
      expect(problem).toMatchObject({ seq_no: 0, path: "[0].parameters.a" });
      expect(problem.message).toContain("set at seq_no 1");
    });

    it("refuses an unknown variable and suggests a near name", () => {
      const plan = [assign(0, { summary: "s" }), done(1, { text: ["${sumary}"] })];
      const problem = theProblem(validatePlan(plan, context), "unknown_variable");
      expect(problem).toMatchObject({ seq_no: 1, path: "[1].parameters.final_answer.text[0]" });
      expect(problem.hint).toContain('Did you mean "summary"?');
    });

    it("refuses a variable set on only one branch of a condition", () => {
      const plan = [branch(0, "?", 1, 2), assign(1, { x: 1 }), done(2, "${x}")];
      expect(theProblem(validatePlan(plan, context), "unassigned_variable")).toMatchObject({
        seq_no: 2,
      });
    });

    it.each([
      ["true", branch(0, "?", 1, 3)],
      ["false", branch(0, "?", 3, 1)],
    ])(
      "refuses a variable set only after a longer %s branch, whichever is walked first",
      (_, jmp) => {
        const plan = [
          jmp,
          assign(1, { x: 1 }),
          jump(2, 5),
          assign(3, { y: 1 }),
          jump(4, 5),
          done(5, "${x}"),
        ];
        expect(theProblem(validatePlan(plan, context), "unassigned_variable")).toMatchObject({
          seq_no: 5,
        });
      },
    );

    it("accepts a variable set on both branches", () => {
      const plan = [
        branch(0, "?", 1, 3),
        assign(1, { x: 1 }),
        jump(2, 4),
        assign(3, { x: 2 }),
        done(4, "${x}"),
      ];
      expectValid(validatePlan(plan, context));
    });

    it("refuses a variable set in a loop body when the loop can exit first", () => {
      const plan = [
        assign(0, { i: 0 }),
        branch(1, "Is ${i} below 3?", 2, 4),
        assign(2, { x: "${i}", i: "${i} + 1" }),
        jump(3, 1),
        done(4, "${x} after ${i}"),
      ];
      const problem = theProblem(validatePlan(plan, context), "unassigned_variable");
      expect(problem).toMatchObject({ seq_no: 4, path: "[4].parameters.final_answer" });
      expect(problem.message).toContain("${x}");
    });

    it("refuses keys of one assign that reference each other, but allows a key its own old value", () => {
      const plan = [
        assign(0, { n: 1 }),
        assign(1, { n: "${n} + 1", m: "${n} * 2" }),
        done(2, "${m}"),
      ];
      const problem = theProblem(validatePlan(plan, context), "assign_keys_reference_each_other");
      expect(problem).toMatchObject({ seq_no: 1, path: "[1].parameters.m" });
      expect(problem.hint).toContain("two assign steps");
    });

    it("counts a calling's output_vars as set after it, not before", () => {
      const ok = [call(0, "llm_generate", { prompt: "p" }, "a"), done(1, "${a}")];
      expectValid(validatePlan(ok, context));
      const own = [call(0, "llm_generate", { prompt: "${a}" }, ["a"]), done(1, "${a}")];
      expect(theProblem(validatePlan(own, context), "unassigned_variable").path).toBe(
        "[0].parameters.tool_params.prompt",
      );
    });

    it("checks references in jmp conditions and contexts", () => {
      const plan = [
        {
          seq_no: 0,
          type: "jmp",
          parameters: {
            condition_prompt: "${a}?",
            context: "${b}",
            jump_if_true: 1,
            jump_if_false: 1,
          },
        },
        done(1),
      ];
      expect(problemsOf(validatePlan(plan, context)).map((p) => p.path)).toEqual([
        "[0].parameters.condition_prompt",
        "[0].parameters.context",
      ]);
    });

    it("does not check reasoning text, which is recorded and not resolved", () => {
      const plan = [
        { seq_no: 0, type: "reasoning", parameters: { chain_of_thoughts: "then ${later}" } },
        done(1),
      ];
      expectValid(validatePlan(plan, context));
    });
  });

  describe("check 5: final_answer", () => {
    it("refuses a plan that never sets final_answer", () => {
      const problem = theProblem(
        validatePlan([assign(0, { answer: 1 })], context),
        "no_final_answer",
      );
      expect(problem).toMatchObject({ seq_no: null, path: "" });
    });

    it("wants the exact name, and says so for a near miss", () => {
      const problem = theProblem(
        validatePlan([assign(0, { final_answers: 1 })], context),
        "no_final_answer",
      );
      expect(problem.hint).toContain('"final_answers" (set at seq_no 0) is not "final_answer"');
    });

    it("refuses a plan whose only final_answer is unreachable", () => {
      const plan = [jump(0, 0), done(1)];
      expect(theProblem(validatePlan(plan, context), "no_final_answer").message).toContain(
        "seq_no 1 sets it",
      );
    });

    it("counts a calling whose output_vars hold final_answer", () => {
      expectValid(
        validatePlan([call(0, "llm_generate", { prompt: "p" }, ["final_answer"])], context),
      );
    });
  });

  describe("check 6: reachability (warnings)", () => {
    it("warns about an instruction after the one that sets final_answer", () => {
      const result = validatePlan([done(0), assign(1, { x: 1 })], context);
      expectValid(result);
      expect(result.warnings).toHaveLength(1);
      expect(result.warnings[0]).toMatchObject({
        code: "unreachable_instruction",
        seq_no: 1,
        path: "[1]",
      });
      expect(result.warnings[0]?.message).toContain("sets final_answer");
    });

    it("warns about an instruction that a jump skips", () => {
      const result = validatePlan([jump(0, 2), assign(1, { x: "${nowhere}" }), done(2)], context);
      expectValid(result);
      expect(result.warnings.map((w) => [w.code, w.seq_no])).toEqual([
        ["unreachable_instruction", 1],
      ]);
    });

    it("warns about a path that runs past the end", () => {
      const result = validatePlan([branch(0, "?", 1, 2), done(1), assign(2, { x: 1 })], context);
      expectValid(result);
      expect(result.warnings.map((w) => [w.code, w.seq_no])).toEqual([["runs_past_end", 2]]);
    });
  });
});
