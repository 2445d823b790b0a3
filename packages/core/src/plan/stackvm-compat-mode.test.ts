// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/** Validation in StackVM compatibility mode (`compat-mode.ts`), against the default, strict. */
import { describe, expect, it } from "vitest";
import { assign, call, context, done } from "../testing/plan-fixtures";
import { validatePlan } from "./validate";

const stackvm = { ...context, compat: "stackvm" as const };
const codes = (list: Array<{ code: string }>) => list.map((p) => p.code).sort();

describe("StackVM compatibility mode at validation", () => {
  it("makes a reference nothing sets a warning that says it runs as text", () => {
    const plan = [done(0, "Answer: ${nowhere}")];
    const strict = validatePlan(plan, context);
    expect(strict.ok).toBe(false);
    if (!strict.ok) expect(codes(strict.problems)).toEqual(["unknown_variable"]);

    const result = validatePlan(plan, stackvm);
    expect(result.ok).toBe(true);
    expect(codes(result.warnings)).toEqual(["unknown_variable"]);
    expect(result.warnings[0]?.message).toContain("left as text");
  });

  it("makes a reference that only some paths set a warning", () => {
    const plan = [
      {
        seq_no: 0,
        type: "jmp",
        parameters: { condition_prompt: "Go?", jump_if_true: 1, jump_if_false: 2 },
      },
      assign(1, { found: "yes" }),
      done(2, "${found}"),
    ];
    expect(validatePlan(plan, context).ok).toBe(false);
    const result = validatePlan(plan, stackvm);
    expect(result.ok).toBe(true);
    expect(codes(result.warnings)).toEqual(["unassigned_variable"]);
  });

  it("trims a name with stray spaces, which ${ name} then finds", () => {
    const plan = [
      call(0, "llm_generate", { prompt: "p" }, [" summary"]),
      assign(1, { " count ": 2 }),
      done(2, "${ summary} ${count}"),
    ];
    const strict = validatePlan(plan, context);
    expect(strict.ok).toBe(false);
    if (!strict.ok) expect(codes(strict.problems)).toContain("invalid_variable_name");

    const result = validatePlan(plan, stackvm);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan[0]?.parameters).toMatchObject({ output_vars: ["summary"] });
    expect(result.plan[1]?.parameters).toEqual({ count: 2 });
    expect(codes(result.warnings)).toEqual(["name_trimmed", "name_trimmed"]);
  });

  it("leaves a trimmed name that another key has for validation to refuse", () => {
    const result = validatePlan([assign(0, { " a": 1, a: 2 }), done(1, "${a}")], stackvm);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(codes(result.problems)).toContain("invalid_variable_name");
  });

  it("warns that a reference nested below the top-level values stays as written", () => {
    const plan = [
      assign(0, { x: "1" }),
      call(1, "llm_generate", { prompt: "${x}", context: { nested: "${x}" } }, ["final_answer"]),
    ];
    const result = validatePlan(plan, stackvm);
    expect(codes(result.warnings)).toEqual(["nested_reference"]);
    expect(result.warnings[0]?.path).toBe("[1].parameters.tool_params.context.nested");
    expect(codes(validatePlan(plan, context).warnings)).toEqual([]);
  });

  it("warns in both modes about a dotted reference into llm_generate's text", () => {
    const plan = [
      call(0, "llm_generate", { prompt: "Give steps as JSON" }, ["steps"]),
      done(1, "${steps.steps}"),
    ];
    const strict = validatePlan(plan, context);
    expect(strict.ok).toBe(true);
    expect(codes(strict.warnings)).toEqual(["reference_into_text"]);
    expect(strict.warnings[0]?.message).toContain("this step fails");
    const result = validatePlan(plan, stackvm);
    expect(codes(result.warnings)).toEqual(["reference_into_text"]);
    expect(result.warnings[0]?.message).toContain("stays as text");
    // Set by an assign too, the value may be an object: no warning.
    const mixed = [
      assign(0, { steps: { steps: "a" } }),
      ...plan.map((s, i) => ({ ...s, seq_no: i + 1 })),
    ];
    expect(codes(validatePlan(mixed, context).warnings)).not.toContain("reference_into_text");
  });

  it("still refuses what the original could not run either", () => {
    const result = validatePlan([call(0, "no_such_tool", {}, ["final_answer"])], stackvm);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(codes(result.problems)).toEqual(["unknown_tool"]);
  });
});
