// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import { describe, expect, it } from "vitest";
import * as z from "zod";
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
import { MAX_LISTED_PROBLEMS } from "./problems";
import { validatePlan } from "./validate";

describe("validatePlan", () => {
  describe("accepts", () => {
    it("a StackVM-style plan: reasoning first, output_vars arrays, llm_generate calls, jumps", () => {
      const plan = [
        {
          seq_no: 0,
          type: "reasoning",
          parameters: {
            chain_of_thoughts: "Gather facts, then check them.",
            dependency_analysis: "1 -> 2 -> 3",
          },
        },
        call(1, "llm_generate", { prompt: "List facts about ${topic}." }, ["facts"]),
        call(2, "llm_generate", { prompt: "Summarise", context: "${facts}" }, ["summary", "score"]),
        branch(3, "Is ${score} above 5?", 5, 4),
        jump(4, 1),
        done(5, "${summary}"),
      ];
      const result = validatePlan(plan, context);
      expectValid(result);
      expect(result.warnings).toEqual([]);
    });

    it("the example of the spec, and returns it parsed", () => {
      const plan = [
        call(0, "llm_generate", { prompt: "List three facts about ${topic}." }, ["facts"]),
        branch(1, "Do these facts mention a date? ${facts}", 2, 3),
        done(2, "Dated: ${facts}"),
        done(3, "Undated: ${facts}"),
      ];
      const result = validatePlan(plan, context);
      expect(result).toEqual({ ok: true, plan, warnings: [] });
    });

    it("fills in defaults: a calling without tool_params, output_vars as one string", () => {
      const result = validatePlan([call(0, "llm_generate", undefined, "x"), done(1, "${x}")], {
        ...context,
        tools: new Map([
          ["llm_generate", { input: z.object({ prompt: z.string().default("hi") }) }],
        ]),
      });
      expectValid(result);
      expect(result.ok && result.plan[0]).toMatchObject({
        parameters: { tool_params: {}, output_vars: "x" },
      });
    });
  });

  describe("check 1: shape", () => {
    it.each([
      ["null", null],
      ["an object", { seq_no: 0 }],
      ["a string", "[]"],
    ])("refuses %s as a plan", (_, input) => {
      expect(theProblem(validatePlan(input, context), "not_a_plan")).toMatchObject({
        seq_no: null,
        path: "",
      });
    });

    it("refuses an empty plan", () => {
      expect(theProblem(validatePlan([], context), "empty_plan").hint).toContain("final_answer");
    });

    it("refuses more than 500 instructions", () => {
      const plan = Array.from({ length: 501 }, (_, i) =>
        i === 500 ? done(i) : assign(i, { x: i }),
      );
      expect(theProblem(validatePlan(plan, context), "too_many_instructions").message).toContain(
        "501",
      );
    });

    it("refuses an instruction that is not an object", () => {
      const problem = theProblem(
        validatePlan([assign(0, {}), "oops", done(2)], context),
        "invalid_instruction",
      );
      expect(problem).toMatchObject({ seq_no: null, path: "[1]" });
    });

    it.each([
      ["missing", undefined],
      ["negative", -1],
      ["fractional", 1.5],
      ["a string", "1"],
    ])("refuses a seq_no that is %s", (_, seq_no) => {
      const problem = theProblem(validatePlan([{ ...done(0), seq_no }], context), "invalid_seq_no");
      expect(problem).toMatchObject({ seq_no: null, path: "[0].seq_no" });
    });

    it("refuses a duplicate seq_no at its second use", () => {
      const problem = theProblem(
        validatePlan([assign(3, { a: 1 }), done(3)], context),
        "duplicate_seq_no",
      );
      expect(problem).toMatchObject({ seq_no: 3, path: "[1].seq_no" });
      expect(problem.message).toContain("[0] and [1]");
    });

    it("names the five known types for an unknown type", () => {
      const plan = [{ seq_no: 0, type: "summarize", parameters: { prompt: "x" } }, done(1)];
      const problem = theProblem(validatePlan(plan, context), "unknown_instruction_type");
      expect(problem).toMatchObject({ seq_no: 0, path: "[0].type" });
      expect(problem.message).toContain("assign, calling, jmp, reasoning and wait");
    });

    it("refuses an instruction without a type", () => {
      const problem = theProblem(
        validatePlan([{ seq_no: 0, parameters: {} }, done(1)], context),
        "unknown_instruction_type",
      );
      expect(problem.message).toContain("has no type");
    });

    it("refuses a calling without tool_name", () => {
      const plan = [{ seq_no: 0, type: "calling", parameters: { tool_params: {} } }, done(1)];
      const problem = theProblem(validatePlan(plan, context), "missing_parameter");
      expect(problem).toMatchObject({ seq_no: 0, path: "[0].parameters.tool_name" });
      expect(problem.hint).toContain("tool_name");
    });

    it("refuses a bad output var name with its index", () => {
      const plan = [call(0, "llm_generate", { prompt: "p" }, ["ok", "not ok"]), done(1)];
      const problem = theProblem(validatePlan(plan, context), "invalid_variable_name");
      expect(problem.path).toBe("[0].parameters.output_vars[1]");
    });

    it.each([
      ["a dash", '{"x-y": 1}', '[0].parameters["x-y"]'],
      ["__proto__", '{"__proto__": 1}', "[0].parameters.__proto__"],
    ])("refuses an assigned name with %s", (_, parameters, path) => {
      const plan = [assign(0, JSON.parse(parameters)), done(1)];
      expect(theProblem(validatePlan(plan, context), "invalid_variable_name").path).toBe(path);
    });

    it("refuses a jmp with neither a condition nor a target", () => {
      const codes = problemsOf(
        validatePlan([{ seq_no: 0, type: "jmp", parameters: {} }, done(1)], context),
      );
      expect(codes.map((p) => p.path)).toEqual([
        "[0].parameters.condition_prompt",
        "[0].parameters.jump_if_true",
        "[0].parameters.jump_if_false",
      ]);
    });

    it("refuses a jmp with both a condition and a target", () => {
      const plan = [
        {
          seq_no: 0,
          type: "jmp",
          parameters: { ...(branch(0, "?", 1, 1).parameters as object), target_seq: 1 },
        },
        done(1),
      ];
      expect(theProblem(validatePlan(plan, context), "ambiguous_jump").path).toBe(
        "[0].parameters.target_seq",
      );
    });

    it("warns about parameters and fields it ignores", () => {
      const plan = [
        { ...call(0, "llm_generate", { prompt: "p" }), output_var: "x" },
        {
          seq_no: 1,
          type: "calling",
          parameters: { tool_name: "llm_generate", tool_params: { prompt: "p" }, output_var: "y" },
        },
        done(2),
      ];
      const result = validatePlan(plan, context);
      expectValid(result);
      expect(result.warnings.map((w) => [w.code, w.path])).toEqual([
        ["unknown_field", "[0].output_var"],
        ["unknown_parameter", "[1].parameters.output_var"],
      ]);
    });

    it("refuses parameters nested too deep", () => {
      let deep: unknown = "x";
      for (let i = 0; i < 200; i += 1) deep = [deep];
      const problem = theProblem(validatePlan([done(0, deep)], context), "too_deep");
      expect(problem).toMatchObject({ seq_no: 0, path: "[0].parameters" });
    });
  });

  describe("check 2: jump targets", () => {
    it.each([
      ["target_seq", jump(0, 7)],
      ["jump_if_true", branch(0, "?", 7, 1)],
      ["jump_if_false", branch(0, "?", 1, 7)],
    ])("refuses a %s that no instruction has", (key, jmp) => {
      const problem = theProblem(validatePlan([jmp, done(1)], context), "unknown_jump_target");
      expect(problem).toMatchObject({ seq_no: 0, path: `[0].parameters.${key}` });
      expect(problem.hint).toContain("0, 1");
    });
  });

  describe("check 3: tools", () => {
    it("refuses a tool that does not exist, listing the allowed ones", () => {
      const problem = theProblem(
        validatePlan([call(0, "send_fax", {}, "r"), done(1)], context),
        "unknown_tool",
      );
      expect(problem).toMatchObject({ seq_no: 0, path: "[0].parameters.tool_name" });
      expect(problem.hint).toContain("async_tool, llm_generate, run_code, strict_tool");
    });

    it("refuses a tool that the namespace does not allow", () => {
      const plan = [call(0, "http_request", { url: "https://example.com" }, "r"), done(1)];
      expect(theProblem(validatePlan(plan, context), "tool_not_allowed").message).toContain(
        "http_request",
      );
    });

    it("checks literal params against the tool's schema", () => {
      const plan = [call(0, "run_code", { language: "ruby", code: "1" }, "r"), done(1)];
      const problem = theProblem(validatePlan(plan, context), "invalid_tool_params");
      expect(problem).toMatchObject({ seq_no: 0, path: "[0].parameters.tool_params.language" });
      expect(problem.hint).toContain("language (required), code (required), inputs");
    });

    it("treats an escaped \\${ as literal text", () => {
      expectValid(
        validatePlan(
          [call(0, "run_code", { language: "javascript", code: "`\\${a}`" }), done(1)],
          context,
        ),
      );
    });

    it("with references, checks that required keys are there", () => {
      const plan = [call(0, "run_code", { code: "${topic}" }, "r"), done(1)];
      const problem = theProblem(validatePlan(plan, context), "missing_tool_param");
      expect(problem.path).toBe("[0].parameters.tool_params.language");
    });

    it("with references, checks literal keys and leaves referenced keys to run time", () => {
      const plan = [
        call(0, "run_code", { language: 3, code: "${topic}", inputs: "${topic}" }, "r"),
        done(1),
      ];
      const problem = theProblem(validatePlan(plan, context), "invalid_tool_params");
      expect(problem.path).toBe("[0].parameters.tool_params.language");
    });

    it("refuses an unknown key for a strict schema, warns for others", () => {
      const strict = validatePlan(
        [call(0, "strict_tool", { n: "${topic}", m: 1 }), done(1)],
        context,
      );
      expect(theProblem(strict, "invalid_tool_params").path).toBe("[0].parameters.tool_params.m");
      const loose = validatePlan(
        [call(0, "llm_generate", { prompt: "p", temp: 1 }), done(1)],
        context,
      );
      expect(loose.warnings.map((w) => [w.code, w.path])).toEqual([
        ["unknown_tool_param", "[0].parameters.tool_params.temp"],
      ]);
    });

    it("skips params that a schema cannot check before running", () => {
      expectValid(validatePlan([call(0, "async_tool", { x: "a" }), done(1)], context));
    });
  });

  it("reports every problem, not the first", () => {
    const plan = [
      { seq_no: 0, type: "loop", parameters: {} },
      call(1, "send_fax", {}, "r"),
      jump(2, 9),
      assign(3, { a: "${missing}" }),
    ];
    const codes = problemsOf(validatePlan(plan, context)).map((p) => p.code);
    expect(codes).toEqual(
      expect.arrayContaining([
        "unknown_instruction_type",
        "unknown_tool",
        "unknown_jump_target",
        "no_final_answer",
      ]),
    );
  });

  it("lists at most a bounded number of problems and counts the rest", () => {
    const plan = Array.from({ length: 300 }, (_, i) => assign(i, { x: `\${m${i}}` }));
    const problems = problemsOf(validatePlan(plan, context));
    expect(problems).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(problems.at(-1)).toMatchObject({ code: "more_not_listed" });
    expect(problems.at(-1)?.message).toMatch(/^\d+ more/);
  });
});
