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
 * - an instruction of any other type whose `parameters` are already in calling
 *   form (`tool_name`, `tool_params`) into that `calling` (StackVM's VM ran an
 *   unknown type as a calling);
 * - in StackVM compatibility mode only (`compat-mode.ts`): a variable name with
 *   stray spaces (an output var, an assign's key) trimmed; StackVM matched
 *   `${ name}` to the name " name" by text, and our references allow the spaces.
 *
 * each with a warning, so the answer that accepts the plan says what changed.
 * Where the language stays stricter (an unknown reference is an error, not text
 * left as `${x}`, unless in compatibility mode), nothing is rewritten here.
 */
import type { PlanCompat } from "./compat-mode";
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
  compat: PlanCompat = "strict",
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
    if (typeof type === "string" && !TYPES.has(type) && isCallingForm(raw.parameters)) {
      // Already {tool_name, tool_params, output_vars}: StackVM ran it as that calling.
      instruction = { ...raw, type: "calling" };
      warnings.add({
        seq_no: entry.seqNo,
        path: planPath(index, ["type"]),
        code: "tool_as_type",
        message: `The instruction at ${label(entry)} has the type "${type}" and parameters of a calling: it is read as a calling of "${String(raw.parameters.tool_name)}".`,
        hint: 'Write "type": "calling".',
      });
    } else if (
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
    const normalized = normalizeLlmGenerate(instruction, entry, warnings);
    return compat === "stackvm" ? trimNames(normalized, entry, warnings) : normalized;
  });
}

/** Parameters already in calling form: a tool name and an object of tool params. */
function isCallingForm(p: unknown): p is Record<string, unknown> {
  return isObject(p) && typeof p.tool_name === "string" && isObject(p.tool_params);
}

/** StackVM compatibility mode: output vars and assign keys with stray spaces, trimmed. */
function trimNames(
  instruction: Record<string, unknown>,
  entry: { index: number; seqNo: number | null },
  warnings: ProblemList,
): Record<string, unknown> {
  const p = instruction.parameters;
  if (!isObject(p)) return instruction;
  const warn = (name: string, keys: PropertyKey[]) =>
    warnings.add({
      seq_no: entry.seqNo,
      path: planPath(entry.index, ["parameters", ...keys]),
      code: "name_trimmed",
      message: `The variable name ${JSON.stringify(name)} at ${label(entry)} has stray spaces; it is read as "${name.trim()}".`,
      hint: `Write "${name.trim()}".`,
    });
  const stray = (name: unknown): name is string =>
    typeof name === "string" && name !== name.trim() && name.trim() !== "";
  if (instruction.type === "calling" && Array.isArray(p.output_vars)) {
    if (!p.output_vars.some(stray)) return instruction;
    const output_vars = p.output_vars.map((name: unknown, i) => {
      if (!stray(name)) return name;
      warn(name, ["output_vars", i]);
      return name.trim();
    });
    return { ...instruction, parameters: { ...p, output_vars } };
  }
  if (instruction.type === "assign") {
    const keys = Object.keys(p);
    // A trimmed name that another key already has is left for validation to refuse.
    if (!keys.some((k) => stray(k) && !Object.hasOwn(p, k.trim()))) return instruction;
    const entries = Object.entries(p).map(([key, value]): [string, unknown] => {
      if (!stray(key) || Object.hasOwn(p, key.trim())) return [key, value];
      warn(key, [key]);
      return [key.trim(), value];
    });
    return { ...instruction, parameters: Object.fromEntries(entries) };
  }
  return instruction;
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
