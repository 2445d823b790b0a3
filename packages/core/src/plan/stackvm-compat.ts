/**
 * Plans written for the original StackVM, read as they are where the meaning is
 * clear (spec: plan-language.md, "Instruction types", and version 1.1). Before
 * validation, on any JSON, this pass rewrites:
 *
 * - an instruction whose `type` is the name of a tool into a `calling` of that
 *   tool, its `parameters` as `tool_params` (and `output_vars` taken from them);
 * - a `calling` of `llm_generate`: a `null` context is left out, and parameters
 *   the tool does not take (StackVM's `llm_generate` ignored them) are dropped;
 * - StackVM's spec before 2024-10-15: `jmp_if` (merged into `jmp` then, with the
 *   same parameters) into `jmp`, and, in an instruction whose type is a tool
 *   (the form of that spec), a single `output_var` name into `output_vars: [name]`;
 *
 * each with a warning, so the answer that accepts the plan says what changed.
 * Where the language stays stricter (an unknown reference is an error, not text
 * left as `${x}`), nothing is rewritten here.
 */
import type { ProblemList } from "./problems";
import { label, planPath } from "./problems";

/** The keys `llm_generate` takes. */
const LLM_GENERATE_KEYS = new Set(["prompt", "context", "response_format"]);
const TYPES = new Set(["assign", "calling", "jmp", "reasoning", "wait"]);

/**
 * Returns the plan with StackVM's forms rewritten (a new array; the input is not
 * changed), adding a warning for each rewrite. Anything it does not recognize is
 * left for validation to judge.
 *
 * @example
 * normalizeStackvmPlan([{seq_no: 0, type: "llm_generate", parameters: {prompt: "p", output_vars: ["a"]}}], new Set(["llm_generate"]), warnings)
 * // [{seq_no: 0, type: "calling", parameters: {tool_name: "llm_generate", tool_params: {prompt: "p"}, output_vars: ["a"]}}]
 */
export function normalizeStackvmPlan(
  plan: readonly unknown[],
  tools: { has(name: string): boolean },
  warnings: ProblemList,
): unknown[] {
  return Array.from(plan, (raw: unknown, index) => {
    if (!isObject(raw)) return raw;
    const entry = { index, seqNo: typeof raw.seq_no === "number" ? raw.seq_no : null };
    let instruction = raw;
    if (raw.type === "jmp_if" && isObject(raw.parameters)) {
      instruction = { ...raw, type: "jmp" };
      warnings.add({
        seq_no: entry.seqNo,
        path: planPath(index, ["type"]),
        code: "jmp_if",
        message: `The instruction at ${label(entry)} has the type "jmp_if" of StackVM's first spec: it is read as a conditional jmp.`,
        hint: 'Write {"type": "jmp", "parameters": {"condition_prompt": ..., "jump_if_true": ..., "jump_if_false": ...}}.',
      });
    }
    const type = instruction.type;
    if (
      typeof type === "string" &&
      !TYPES.has(type) &&
      tools.has(type) &&
      isObject(raw.parameters)
    ) {
      const { output_vars, ...toolParams } = raw.parameters;
      const { output_var } = toolParams;
      const single = typeof output_var === "string" && output_vars === undefined;
      if (single) delete toolParams.output_var;
      instruction = {
        ...raw,
        type: "calling",
        parameters: {
          tool_name: type,
          tool_params: toolParams,
          ...(output_vars === undefined ? {} : { output_vars }),
          ...(single ? { output_vars: [output_var] } : {}),
        },
      };
      if (single) {
        warnings.add({
          seq_no: entry.seqNo,
          path: planPath(index, ["parameters", "output_var"]),
          code: "output_var",
          message: `The instruction at ${label(entry)} names its output with "output_var" of StackVM's first spec: it is read as output_vars ["${output_var}"].`,
          hint: `Write "output_vars": ["${output_var}"].`,
        });
      }
      warnings.add({
        seq_no: entry.seqNo,
        path: planPath(index, ["type"]),
        code: "tool_as_type",
        message: `The instruction at ${label(entry)} has the type "${type}", a tool: it is read as a calling of "${type}".`,
        hint: `Write {"type": "calling", "parameters": {"tool_name": "${type}", "tool_params": {...}, "output_vars": [...]}}.`,
      });
    }
    return normalizeLlmGenerate(instruction, entry, warnings);
  });
}

function normalizeLlmGenerate(
  instruction: Record<string, unknown>,
  entry: { index: number; seqNo: number | null },
  warnings: ProblemList,
): Record<string, unknown> {
  const p = instruction.parameters;
  if (instruction.type !== "calling" || !isObject(p) || p.tool_name !== "llm_generate") {
    return instruction;
  }
  if (!isObject(p.tool_params)) return instruction;
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(p.tool_params)) {
    const dropNull = key === "context" && value === null;
    if (LLM_GENERATE_KEYS.has(key) && !dropNull) {
      params[key] = value;
      continue;
    }
    warnings.add({
      seq_no: entry.seqNo,
      path: planPath(entry.index, ["parameters", "tool_params", key]),
      code: dropNull ? "null_context" : "unknown_tool_param",
      message: dropNull
        ? `The llm_generate at ${label(entry)} has a null context; it is left out.`
        : `"llm_generate" takes no input "${key}" (at ${label(entry)}); it is dropped.`,
      hint: "llm_generate takes prompt, context and response_format.",
    });
  }
  return { ...instruction, parameters: { ...p, tool_params: params } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
