/**
 * Validation of a plan before it runs (spec: plan-language.md, "Validation before
 * running"). It never throws on any JSON input and lists every problem it finds, each
 * with a place and a hint, so that one repair round can fix them all:
 *
 * 1. shape: instructions, unique seq_nos, known types (this file), parameters
 *    (`parameters-check.ts`);
 * 2. jump targets exist (this file);
 * 3. tools exist, are allowed, and get fitting literal params (`tool-check.ts`);
 * 4. references are set on every path, 5. `final_answer` is reachable,
 * 6. unreachable instructions are warnings (`control-flow.ts`).
 */
import type { PlanCompat } from "./compat-mode";
import { checkFlow } from "./control-flow";
import { checkGroupMarks } from "./groups";
import { shapeProblem } from "./json-shape";
import { checkParameters, INSTRUCTION_TYPES, type InstructionType } from "./parameters-check";
import { label, type PlanProblem, ProblemList, planPath } from "./problems";
import { MAX_VALUE_DEPTH } from "./references";
import { FINAL_ANSWER, MAX_PLAN_LENGTH, Plan } from "./schema";
import { normalizeStackvmPlan } from "./stackvm-compat";
import { checkToolCall, type ToolInput } from "./tool-check";

export interface ValidationContext {
  /** Every tool that exists (built-in and the namespace's code tools), with its input schema. */
  tools: ReadonlyMap<string, ToolInput>;
  /** Names the task's namespace allows (code tools of the namespace count as allowed). */
  allowedTools: ReadonlySet<string>;
  /** Variables that exist before the plan runs (task inputs). */
  inputs: ReadonlySet<string>;
  /**
   * `stackvm`: StackVM compatibility mode (`compat-mode.ts`): names with stray
   * spaces are trimmed and references nothing sets are warnings. Default `strict`.
   */
  compat?: PlanCompat;
  /**
   * An adaptive task's plan so far (`planning: "adaptive"`): it need not set
   * `final_answer` yet, since the planner writes more after its last step.
   */
  partial?: boolean;
}

export type ValidationResult =
  | { ok: true; plan: Plan; warnings: PlanProblem[] }
  | { ok: false; problems: PlanProblem[]; warnings: PlanProblem[] };

/** Plans longer than this are refused without looking at each instruction. */
const MAX_INSTRUCTIONS_EXAMINED = 2_000;

/** An instruction as far as it could be read. */
interface Entry {
  index: number;
  seqNo: number | null;
  type: InstructionType | null;
  parameters: unknown;
  tooDeep: boolean;
}

/**
 * Validates a plan (any JSON) against the plan language and the task's tools and
 * inputs. On success, `plan` is the parsed plan (defaults filled in).
 *
 * @example
 * const result = validatePlan(JSON.parse(body), { tools, allowedTools, inputs: new Set(["topic"]) });
 * if (!result.ok) throw new ValidationError("invalid_plan", "...", result.problems);
 */
export function validatePlan(input: unknown, context: ValidationContext): ValidationResult {
  const problems = new ProblemList();
  const warnings = new ProblemList();
  const fail = (): ValidationResult => ({
    ok: false,
    problems: problems.list(),
    warnings: warnings.list(),
  });
  const example = '[{"seq_no": 0, "type": "assign", "parameters": {"final_answer": "Hello"}}]';

  if (!Array.isArray(input)) {
    const plan = (p: Omit<PlanProblem, "seq_no" | "path">) =>
      problems.add({ seq_no: null, path: "", ...p });
    plan({
      code: "not_a_plan",
      message: `A plan is a JSON array of instructions, but this is ${kindOf(input)}.`,
      hint: `Send an array of instructions, e.g. ${example}.`,
    });
    return fail();
  }
  if (input.length === 0) {
    problems.add({
      seq_no: null,
      path: "",
      code: "empty_plan",
      message: "The plan has no instructions.",
      hint: `Give it at least one instruction, and set final_answer, e.g. ${example}.`,
    });
    return fail();
  }
  if (input.length > MAX_PLAN_LENGTH) {
    problems.add({
      seq_no: null,
      path: "",
      code: "too_many_instructions",
      message: `The plan has ${input.length} instructions; at most ${MAX_PLAN_LENGTH} are allowed.`,
      hint: "Use fewer, larger steps: one code_task or llm_generate can do the work of many assigns.",
    });
    if (input.length > MAX_INSTRUCTIONS_EXAMINED) return fail();
  }

  // Array.from visits holes too, so every index gets an entry.
  // Plans written for the original StackVM: its forms rewritten, each with a warning.
  const compat = context.compat ?? "strict";
  const plan = normalizeStackvmPlan(input, context.tools, warnings, compat);
  const entries = Array.from(plan, (raw: unknown, index) =>
    readInstruction(raw, index, context, problems, warnings),
  );
  checkSeqNos(entries, problems);
  checkJumpTargets(entries, problems, warnings);
  for (const entry of entries) {
    const p = entry.parameters;
    if (entry.type !== "calling" || !isObject(p) || typeof p.tool_name !== "string") continue;
    const params = isObject(p.tool_params) && !entry.tooDeep ? p.tool_params : undefined;
    if (p.tool_params !== undefined && params === undefined) continue;
    checkToolCall(
      { index: entry.index, seqNo: entry.seqNo, toolName: p.tool_name, params },
      context.tools,
      context.allowedTools,
      problems,
      warnings,
    );
  }
  // In StackVM compatibility mode, a reference nothing sets runs as text: a warning.
  checkFlow(entries, context.inputs, problems, warnings, compat, context.partial === true);

  if (problems.size === 0) {
    const parsed = Plan.safeParse(plan);
    // Marked parallel groups must be ones (`groups.ts`).
    for (const p of parsed.success ? checkGroupMarks(parsed.data) : []) {
      const { index, ...problem } = p;
      problems.add({ ...problem, path: planPath(index, ["group"]) });
    }
    if (parsed.success && problems.size === 0) {
      return { ok: true, plan: parsed.data, warnings: warnings.list() };
    }
    // Unreachable while the checks above mirror the schema; kept so a drift fails loudly.
    for (const issue of parsed.success ? [] : parsed.error.issues) {
      problems.add({
        seq_no: null,
        path: planPath(null, issue.path),
        code: "invalid_plan",
        message: issue.message,
        hint: "Make the plan match the plan language (spec/plan-language.md).",
      });
    }
  }
  return fail();
}

function readInstruction(
  raw: unknown,
  index: number,
  context: ValidationContext,
  problems: ProblemList,
  warnings: ProblemList,
): Entry {
  const entry: Entry = { index, seqNo: null, type: null, parameters: undefined, tooDeep: false };
  const at = (...keys: PropertyKey[]) => planPath(index, keys);
  if (!isObject(raw)) {
    problems.add({
      seq_no: null,
      path: at(),
      code: "invalid_instruction",
      message: `The instruction at [${index}] is ${kindOf(raw)}, not an object.`,
      hint: 'Write each instruction as {"seq_no": n, "type": "assign" | "calling" | "jmp" | "reasoning" | "wait", "parameters": {...}}.',
    });
    return entry;
  }
  const seqNo = raw.seq_no;
  if (typeof seqNo === "number" && Number.isSafeInteger(seqNo) && seqNo >= 0) entry.seqNo = seqNo;
  else {
    problems.add({
      seq_no: null,
      path: at("seq_no"),
      code: "invalid_seq_no",
      message:
        seqNo === undefined
          ? `The instruction at [${index}] has no seq_no.`
          : `The seq_no of the instruction at [${index}] is ${JSON.stringify(seqNo) ?? kindOf(seqNo)}, not a non-negative integer.`,
      hint: 'Give every instruction a unique non-negative integer "seq_no", e.g. 0, 1, 2 in array order.',
    });
  }
  const where = { seq_no: entry.seqNo };
  for (const key of Object.keys(raw)) {
    if (key === "group" && raw.type === "calling") {
      if (typeof raw.group !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(raw.group)) {
        problems.add({
          ...where,
          path: at(key),
          code: "invalid_group",
          message: `The group mark of the instruction at [${index}] is ${JSON.stringify(raw.group) ?? kindOf(raw.group)}, not a name.`,
          hint: 'Name a parallel group with 1 to 64 letters, digits, "_" or "-", e.g. "group": "research".',
        });
      }
    } else if (key !== "seq_no" && key !== "type" && key !== "parameters") {
      warnings.add({
        ...where,
        path: at(key),
        code: "unknown_field",
        message: `The instruction at ${label(entry)} has a field "${key}", which is ignored.`,
        hint: 'An instruction has only "seq_no", "type" and "parameters"; move the value into "parameters" or remove it.',
      });
    }
  }
  const type = raw.type;
  if (typeof type === "string" && (INSTRUCTION_TYPES as readonly string[]).includes(type))
    entry.type = type as InstructionType;
  else {
    const shown =
      typeof type === "string"
        ? `the type "${type}"`
        : type === undefined
          ? "no type"
          : `the type ${kindOf(type)}`;
    const tool = typeof type === "string" && context.tools.has(type);
    problems.add({
      ...where,
      path: at("type"),
      code: "unknown_instruction_type",
      message: `The instruction at ${label(entry)} has ${shown}; the known types are assign, calling, jmp, reasoning and wait.`,
      hint: tool
        ? `To call the tool "${type}", write {"type": "calling", "parameters": {"tool_name": "${type}", "tool_params": {...}, "output_vars": ["..."]}}.`
        : 'Use one of "assign", "calling", "jmp", "reasoning", "wait".',
    });
  }
  entry.parameters = raw.parameters;
  const shape = shapeProblem(raw.parameters, `The parameters of ${label(entry)}`, MAX_VALUE_DEPTH);
  if (shape?.code === "too_deep") {
    entry.tooDeep = true;
    problems.add({
      ...where,
      path: at("parameters"),
      code: "too_deep",
      message: `The parameters of ${label(entry)} nest objects and arrays more than ${MAX_VALUE_DEPTH} levels deep.`,
      hint: "Flatten the value; a plan never needs that much nesting.",
    });
  } else if (shape) {
    // Such a key becomes the prototype of the next copy and is lost, or fails the store.
    entry.tooDeep = true;
    problems.add({
      ...where,
      path: `${at("parameters")}.${shape.path}`,
      code: "forbidden_key",
      message: shape.message,
      hint: "Rename the key; plans cannot use __proto__, constructor or prototype as keys.",
    });
  }
  if (entry.type !== null) checkParameters(entry, entry.type, problems, warnings);
  return entry;
}

function checkSeqNos(entries: readonly Entry[], problems: ProblemList): void {
  const first = new Map<number, number>();
  for (const entry of entries) {
    if (entry.seqNo === null) continue;
    const earlier = first.get(entry.seqNo);
    if (earlier === undefined) first.set(entry.seqNo, entry.index);
    else {
      problems.add({
        seq_no: entry.seqNo,
        path: planPath(entry.index, ["seq_no"]),
        code: "duplicate_seq_no",
        message: `seq_no ${entry.seqNo} is used by the instructions at [${earlier}] and [${entry.index}]; seq_nos must be unique.`,
        hint: "Renumber the instructions (e.g. 0, 1, 2 in array order) and update the jumps to match.",
      });
    }
  }
}

/**
 * Check 2. Only well-typed targets: a target of the wrong type is a shape problem.
 * A missing target of a jmp that no path reaches is a warning (StackVM's plans
 * carry such leftovers, and they never run); of a reachable one, a problem.
 */
function checkJumpTargets(
  entries: readonly Entry[],
  problems: ProblemList,
  warnings: ProblemList,
): void {
  const exists = new Set(entries.flatMap((e) => (e.seqNo === null ? [] : [e.seqNo])));
  const seqNos = [...exists].sort((a, b) => a - b);
  const reachable = reachableIndexes(entries);
  for (const entry of entries) {
    const p = entry.parameters;
    if (entry.type !== "jmp" || !isObject(p)) continue;
    for (const key of ["target_seq", "jump_if_true", "jump_if_false"]) {
      const target = p[key];
      if (
        typeof target !== "number" ||
        !Number.isSafeInteger(target) ||
        target < 0 ||
        exists.has(target)
      )
        continue;
      (reachable.has(entry.index) ? problems : warnings).add({
        seq_no: entry.seqNo,
        path: planPath(entry.index, ["parameters", key]),
        code: "unknown_jump_target",
        message: `The jmp at ${label(entry)} goes to seq_no ${target} (${key}), which no instruction has.`,
        hint: `Jump to a seq_no of the plan: ${seqNos.slice(0, 50).join(", ")}${seqNos.length > 50 ? ", ..." : ""}.`,
      });
    }
  }
}

/** The indexes of the instructions some path from the first one reaches. */
function reachableIndexes(entries: readonly Entry[]): Set<number> {
  const indexOf = new Map<number, number>();
  for (const e of entries)
    if (e.seqNo !== null && !indexOf.has(e.seqNo)) indexOf.set(e.seqNo, e.index);
  const seen = new Set<number>();
  const stack = entries.length > 0 ? [0] : [];
  while (stack.length > 0) {
    const index = stack.pop()!;
    if (seen.has(index) || index >= entries.length) continue;
    seen.add(index);
    const e = entries[index]!;
    const p = isObject(e.parameters) ? e.parameters : {};
    if (e.type === "jmp") {
      for (const key of ["target_seq", "jump_if_true", "jump_if_false"]) {
        const target = indexOf.get(p[key] as number);
        if (target !== undefined) stack.push(target);
      }
      if ("target_seq" in p) continue;
    } else if (setsFinalAnswer(e.type, p)) continue;
    stack.push(index + 1);
  }
  return seen;
}

/** An assign or a calling that sets final_answer ends the branch (the VM stops there). */
function setsFinalAnswer(type: InstructionType | null, p: Record<string, unknown>): boolean {
  if (type === "assign") return Object.hasOwn(p, FINAL_ANSWER);
  if (type !== "calling") return false;
  const out = p.output_vars;
  return out === FINAL_ANSWER || (Array.isArray(out) && out.includes(FINAL_ANSWER));
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
