// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/** Tools, a context and small plan builders shared by the validation tests. */
import { expect } from "vitest";
import * as z from "zod";
import type { PlanProblem } from "../plan/problems";
import type { ValidationContext, ValidationResult } from "../plan/validate";

export const tools: ValidationContext["tools"] = new Map<string, { input: z.ZodType }>([
  ["llm_generate", { input: z.object({ prompt: z.string(), context: z.string().optional() }) }],
  [
    "run_code",
    {
      input: z.object({
        language: z.enum(["javascript", "python"]),
        code: z.string(),
        inputs: z.record(z.string(), z.unknown()).optional(),
      }),
    },
  ],
  ["http_request", { input: z.object({ url: z.string() }) }],
  ["strict_tool", { input: z.strictObject({ n: z.number() }) }],
  ["async_tool", { input: z.object({ x: z.string().refine(async () => true) }) }],
]);
export const context: ValidationContext = {
  tools,
  allowedTools: new Set(["llm_generate", "run_code", "strict_tool", "async_tool"]),
  inputs: new Set(["topic"]),
};

export type Step = Record<string, unknown>;
export const assign = (seq_no: number, parameters: unknown): Step => ({
  seq_no,
  type: "assign",
  parameters,
});
export const call = (
  seq_no: number,
  tool_name: string,
  tool_params: unknown,
  output_vars?: unknown,
): Step => ({
  seq_no,
  type: "calling",
  parameters: { tool_name, tool_params, ...(output_vars === undefined ? {} : { output_vars }) },
});
export const jump = (seq_no: number, target_seq: number): Step => ({
  seq_no,
  type: "jmp",
  parameters: { target_seq },
});
export const branch = (
  seq_no: number,
  condition_prompt: string,
  yes: number,
  no: number,
): Step => ({
  seq_no,
  type: "jmp",
  parameters: { condition_prompt, jump_if_true: yes, jump_if_false: no },
});
export const done = (seq_no: number, value: unknown = "done"): Step =>
  assign(seq_no, { final_answer: value });

export function problemsOf(result: ValidationResult): PlanProblem[] {
  if (result.ok) throw new Error(`expected problems, the plan is valid`);
  return result.problems;
}

/** The one problem with `code`, checked for its place. */
export function theProblem(result: ValidationResult, code: string): PlanProblem {
  const found = problemsOf(result).filter((p) => p.code === code);
  expect(found, JSON.stringify(problemsOf(result), null, 1)).toHaveLength(1);
  return found[0]!;
}

export function expectValid(result: ValidationResult): void {
  expect(result.ok ? [] : result.problems).toEqual([]);
}
