// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
import { describe, expect, it } from "vitest";
import { context, done } from "../testing/plan-fixtures";
import { validatePlan } from "./validate";

const codes = (list: Array<{ code: string }>) => list.map((p) => p.code);

describe("plans written for the original StackVM", () => {
  it("reads an instruction whose type is a tool as a calling of it, with a warning", () => {
    const plan = [
      {
        seq_no: 0,
        type: "llm_generate",
        parameters: { prompt: "Say hi", context: null, output_vars: ["greeting"] },
      },
      { seq_no: 1, type: "assign", parameters: { final_answer: "${greeting}" } },
    ];
    const result = validatePlan(plan, context);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan[0]).toEqual({
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: "Say hi" },
        output_vars: ["greeting"],
      },
    });
    expect(codes(result.warnings)).toEqual(
      expect.arrayContaining(["tool_as_type", "null_context"]),
    );
  });

  it("drops parameters llm_generate does not take instead of refusing the plan", () => {
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "p", model: "gpt-4", temperature: 0 },
          output_vars: "out",
        },
      },
      done(1, "${out}"),
    ];
    const result = validatePlan(plan, context);
    expect(result.ok).toBe(true);
    expect(codes(result.warnings).filter((c) => c === "unknown_tool_param")).toHaveLength(2);
  });

  it("accepts variable names that start with a digit, as StackVM does", () => {
    const plan = [
      { seq_no: 0, type: "assign", parameters: { "2pc_config_docs": "docs" } },
      done(1, "${2pc_config_docs}"),
    ];
    expect(validatePlan(plan, context).ok).toBe(true);
  });

  it("warns about a missing jump target that no path reaches, and refuses a reachable one", () => {
    const unreachable = [done(0, "x"), { seq_no: 1, type: "jmp", parameters: { target_seq: 99 } }];
    const result = validatePlan(unreachable, context);
    expect(result.ok).toBe(true);
    expect(codes(result.warnings)).toContain("unknown_jump_target");

    const reachable = [{ seq_no: 0, type: "jmp", parameters: { target_seq: 99 } }, done(1)];
    const refused = validatePlan(reachable, context);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(codes(refused.problems)).toContain("unknown_jump_target");
  });

  it("reads the first spec's jmp_if and single output_var as jmp and output_vars", () => {
    const plan = [
      { seq_no: 0, type: "llm_generate", parameters: { prompt: "Version?", output_var: "v" } },
      {
        seq_no: 1,
        type: "jmp_if",
        parameters: { condition_prompt: "Found ${v}?", jump_if_true: 2, jump_if_false: 3 },
      },
      { seq_no: 2, type: "llm_generate", parameters: { prompt: "p", output_var: "v" } },
      done(3, "${v}"),
    ];
    const result = validatePlan(plan, context);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan[0]?.parameters).toEqual({
      tool_name: "llm_generate",
      tool_params: { prompt: "Version?" },
      output_vars: ["v"],
    });
    expect(result.plan[1]?.type).toBe("jmp");
    expect(result.plan[2]?.parameters).toMatchObject({ output_vars: ["v"] });
    expect(codes(result.warnings)).toEqual(
      expect.arrayContaining(["tool_as_type", "output_var", "jmp_if"]),
    );
  });

  it("leaves output_var alone when output_vars is also given (the plan is judged as written)", () => {
    const plan = [
      {
        seq_no: 0,
        type: "llm_generate",
        parameters: { prompt: "p", output_vars: ["a"], output_var: "b" },
      },
      done(1, "${b}"),
    ];
    expect(validatePlan(plan, context).ok).toBe(false);
  });

  it("still refuses a reference to a variable nothing sets (stricter than StackVM)", () => {
    const result = validatePlan([done(0, "${nowhere}")], context);
    expect(result.ok).toBe(false);
  });

  it("runs an instruction typed as a tool whose parameters are already a calling (issue 24)", () => {
    const plan = [
      {
        seq_no: 0,
        type: "llm_generate",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "Say hi" },
          output_vars: ["final_answer"],
        },
      },
    ];
    const result = validatePlan(plan, context);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan).toEqual([
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "Say hi" },
          output_vars: ["final_answer"],
        },
      },
    ]);
    expect(codes(result.warnings)).toEqual(["tool_as_type"]);
  });

  it("counts a calling that sets final_answer as ending its branch (issue 24)", () => {
    const plan = [
      {
        seq_no: 0,
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "hi" },
          output_vars: ["final_answer"],
        },
      },
      { seq_no: 1, type: "jmp", parameters: { target_seq: 7 } },
    ];
    const result = validatePlan(plan, context);
    expect(result.ok).toBe(true);
    expect(codes(result.warnings)).toEqual(["unknown_jump_target"]);
    // The same jmp reached (final_answer set only after it) is still refused.
    const reached = validatePlan([plan[1], { ...plan[0], seq_no: 2 }], context);
    expect(reached.ok).toBe(false);
    if (!reached.ok) expect(codes(reached.problems)).toContain("unknown_jump_target");
  });
});
