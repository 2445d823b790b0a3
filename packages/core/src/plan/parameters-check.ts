// biome-ignore-all lint/suspicious/noTemplateCurlyInString: hints show plans' ${name} references
/**
 * Check 1 of plan validation for the parameters of an instruction whose type is
 * known: the plan's own zod schemas, with their issues turned into problems that
 * name the field and say how to fill it in. Keys the VM would ignore are warnings.
 */
import type * as z from "zod";
import { label, type ProblemList, planPath } from "./problems";
import {
  AssignInstruction,
  CallingInstruction,
  ConditionalJump,
  ReasoningInstruction,
  UnconditionalJump,
  WaitForSeconds,
  WaitUntil,
} from "./schema";

/** The instruction types of the plan language. */
export const INSTRUCTION_TYPES = ["assign", "calling", "jmp", "reasoning", "wait"] as const;
export type InstructionType = (typeof INSTRUCTION_TYPES)[number];

const PARAMETERS_HINT: Record<InstructionType, string> = {
  assign:
    'Write the parameters of an assign as an object of variables to set, e.g. {"total": "${a} + ${b}"}.',
  calling:
    'Write the parameters of a calling as {"tool_name": "llm_generate", "tool_params": {"prompt": "..."}, "output_vars": ["answer"]}.',
  jmp: 'Write the parameters of a jmp as {"condition_prompt": "...", "jump_if_true": 3, "jump_if_false": 5} or {"target_seq": 3}.',
  reasoning:
    'Write the parameters of a reasoning step as {"chain_of_thoughts": "...", "dependency_analysis": "..."}.',
  wait: 'Write the parameters of a wait as {"seconds": 30} or {"until": "2026-12-01T09:00:00Z"}.',
};

const FIELD_HINTS: Record<string, string> = {
  tool_name: 'Set "tool_name" to the name of a tool, e.g. "llm_generate".',
  tool_params: 'Set "tool_params" to an object of the tool\'s inputs, e.g. {"prompt": "..."}.',
  output_vars:
    'Set "output_vars" to an array of variable names, e.g. ["summary"]; a name is letters, digits and _.',
  condition_prompt:
    'Set "condition_prompt" to a yes/no question as text, e.g. "Does ${facts} mention a date?".',
  jump_if_true: 'Set "jump_if_true" to the seq_no to run next when the condition holds.',
  jump_if_false: 'Set "jump_if_false" to the seq_no to run next when it does not.',
  target_seq: 'Set "target_seq" to the seq_no to jump to.',
  chain_of_thoughts: 'Write "chain_of_thoughts" as text, or leave it out.',
  dependency_analysis: 'Write "dependency_analysis" as text, or leave it out.',
  seconds: 'Set "seconds" to a positive number of seconds, at most a year (31536000).',
  until: 'Set "until" to an ISO 8601 time with its zone, e.g. "2026-12-01T09:00:00Z".',
};

const VARIABLE_NAME_HINT = 'Name variables with letters, digits and _, e.g. "total_count".';

const PARAMETER_KEYS: Record<Exclude<InstructionType, "assign">, readonly string[]> = {
  calling: Object.keys(CallingInstruction.shape.parameters.shape),
  jmp: [...Object.keys(ConditionalJump.shape), ...Object.keys(UnconditionalJump.shape)],
  reasoning: Object.keys(ReasoningInstruction.shape.parameters.shape),
  wait: ["seconds", "until"],
};

/** Check 1 for the parameters of a known type, with the plan's own zod schemas. */
export function checkParameters(
  entry: { index: number; seqNo: number | null; parameters: unknown },
  type: InstructionType,
  problems: ProblemList,
  warnings: ProblemList,
): void {
  const params = entry.parameters;
  const where = { seq_no: entry.seqNo };
  const at = (...keys: PropertyKey[]) => planPath(entry.index, ["parameters", ...keys]);
  let schema: z.ZodType;
  let known: readonly string[] | null = null;
  switch (type) {
    case "assign":
      schema = AssignInstruction.shape.parameters;
      if (isObject(params) && Object.hasOwn(params, "__proto__")) {
        // zod drops this key without an issue; the variable would silently vanish.
        problems.add({
          ...where,
          path: at("__proto__"),
          code: "invalid_variable_name",
          message: `The assign at ${label(entry)} sets "__proto__", which cannot be a variable name.`,
          hint: VARIABLE_NAME_HINT,
        });
      }
      break;
    case "jmp": {
      const keys = isObject(params) ? Object.keys(params) : [];
      const conditional = keys.some(
        (k) => k !== "target_seq" && Object.hasOwn(ConditionalJump.shape, k),
      );
      if (conditional && keys.includes("target_seq")) {
        problems.add({
          ...where,
          path: at("target_seq"),
          code: "ambiguous_jump",
          message: `The jmp at ${label(entry)} has both a condition and a target_seq.`,
          hint: 'Use either {"condition_prompt", "jump_if_true", "jump_if_false"} or {"target_seq"}, not both.',
        });
      }
      // Pick the form by its keys: zod's union error would only say "Invalid input".
      schema = conditional || !keys.includes("target_seq") ? ConditionalJump : UnconditionalJump;
      known = PARAMETER_KEYS.jmp;
      break;
    }
    case "wait": {
      // Pick the form by its keys, as for jmp; both or neither is one clear problem.
      const keys = isObject(params) ? Object.keys(params) : [];
      if (keys.includes("seconds") === keys.includes("until")) {
        problems.add({
          ...where,
          path: at(),
          code: "invalid_wait",
          message: `The wait at ${label(entry)} needs exactly one of "seconds" and "until".`,
          hint: PARAMETERS_HINT.wait,
        });
        return;
      }
      schema = keys.includes("seconds") ? WaitForSeconds : WaitUntil;
      break;
    }
    default:
      schema = (type === "calling" ? CallingInstruction : ReasoningInstruction).shape.parameters;
      known = PARAMETER_KEYS[type];
  }
  const result = schema.safeParse(params);
  for (const issue of result.error?.issues ?? []) {
    const field = [...issue.path]
      .reverse()
      .find((k): k is string => typeof k === "string" && k in FIELD_HINTS);
    const missing = issue.code === "invalid_type" && valueAt(params, issue.path) === undefined;
    const badKey = issue.code === "invalid_key";
    const nested = badKey ? issue.issues[0]?.message : undefined;
    const badName =
      badKey ||
      (field === "output_vars" && issue.path.length > 1) ||
      issue.message.includes("variable name");
    const name =
      issue.path.length === 0 ? "its parameters" : `parameters.${planPath(null, issue.path)}`;
    problems.add({
      ...where,
      path: at(...issue.path),
      code: missing ? "missing_parameter" : badName ? "invalid_variable_name" : "invalid_parameter",
      message: missing
        ? `The ${type} at ${label(entry)} has no ${name}.`
        : `In the ${type} at ${label(entry)}, ${name} is invalid: ${nested ?? issue.message}.`,
      hint: badName ? VARIABLE_NAME_HINT : field ? FIELD_HINTS[field]! : PARAMETERS_HINT[type],
    });
  }
  if (known && isObject(params)) {
    for (const key of Object.keys(params)) {
      if (known.includes(key)) continue;
      warnings.add({
        ...where,
        path: at(key),
        code: "unknown_parameter",
        message: `The ${type} at ${label(entry)} has a parameter "${key}", which is ignored.`,
        hint: `The parameters of a ${type} are ${known.join(", ")}.`,
      });
    }
  }
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key))
      return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
