// biome-ignore-all lint/suspicious/noTemplateCurlyInString: hints show plans' ${name} references
/**
 * Checks 4 to 6 of plan validation, over the plan's control-flow graph: every
 * reference is to a variable that is set on every path reaching it (or is a task
 * input), some path sets `final_answer`, and no instruction is unreachable.
 *
 * The graph follows the VM: execution starts at the first instruction and falls
 * through in array order; a jmp goes to the seq_nos it names (a conditional one to
 * both); an instruction that sets `final_answer` ends the branch. "Set on every
 * path" is the classic definite-assignment analysis: the variables set before an
 * instruction are the intersection of those set after each of its predecessors.
 *
 * It reads instructions leniently (what an instruction defines and where it jumps,
 * as far as that can be read), so that it also runs on a plan with shape problems
 * and a repair round sees all problems at once.
 */

import type { PlanCompat } from "./compat-mode";
import { definedNames } from "./defined-names";
import {
  closestName,
  label,
  listNames,
  type PlanProblem,
  type ProblemList,
  planPath,
} from "./problems";
import { checkReferenceForm, textOnlyVariables } from "./reference-form";
import { findReferences } from "./references";
import type { FlowInstruction } from "./schema";
import { FINAL_ANSWER, VariableName } from "./schema";

const CONDITIONAL_KEYS = ["condition_prompt", "jump_if_true", "jump_if_false"];

/** Runs checks 4, 5 and 6, adding to `problems` and `warnings`. */
export function checkFlow(
  plan: readonly FlowInstruction[],
  inputs: ReadonlySet<string>,
  problems: ProblemList,
  warnings: ProblemList,
  compat: PlanCompat = "strict",
  /** An adaptive plan so far: not reaching `final_answer` yet is no problem. */
  partial = false,
): void {
  const end = plan.length;
  const indexOfSeq = new Map<number, number>();
  for (const ins of plan) {
    if (ins.seqNo !== null && !indexOfSeq.has(ins.seqNo)) indexOfSeq.set(ins.seqNo, ins.index);
  }
  const defs = plan.map(definedNames);
  const successors = plan.map((ins, i) =>
    successorsOf(ins, indexOfSeq, defs[i]!.includes(FINAL_ANSWER)),
  );
  // A jump whose target is missing or malformed is reported elsewhere; until it is
  // fixed, what is reachable is a guess, so findings that rest on it wait.
  const jumpsIntact = plan.every(
    (ins) => ins.type !== "jmp" || jumpTargetsResolve(ins, indexOfSeq),
  );
  const before = definitelySet(successors, defs, inputs);
  const reached = before.map((set) => set !== null);

  const setAt = new Map<string, number[]>();
  plan.forEach((ins, i) => {
    for (const name of defs[i]!) {
      const list = setAt.get(name);
      if (list) list.push(ins.index);
      else setAt.set(name, [ins.index]);
    }
  });
  // StackVM compatibility mode: such a reference runs as its own text, so it is a warning.
  const unset = compat === "stackvm" ? warnings : problems;
  const form = { compat, textOnly: textOnlyVariables(plan), warnings };
  const context = { plan, inputs, setAt, problems, unset, form };
  plan.forEach((ins, i) => {
    if (reached[i]) checkReferences(ins, before[i]!, context);
  });

  const finals = plan.filter((_, i) => defs[i]!.includes(FINAL_ANSWER));
  const reachedFinals = finals.filter((ins) => reached[ins.index]);
  if (!partial && reachedFinals.length === 0 && (finals.length === 0 || jumpsIntact)) {
    const unreached = finals.map((ins) => label(ins)).join(", ");
    const near = closestName(FINAL_ANSWER, setAt.keys());
    const nearAt = near ? (setAt.get(near) ?? []).map((i) => label(plan[i]!)).join(", ") : "";
    problems.add({
      seq_no: null,
      path: "",
      code: "no_final_answer",
      message:
        finals.length === 0
          ? "No instruction sets final_answer, so the plan can never finish."
          : `No path from the first instruction reaches a step that sets final_answer (${unreached} sets it but is never reached).`,
      hint: `${near ? `"${near}" (set at ${nearAt}) is not "final_answer": the name must be exact. ` : ""}End every path with a step that sets the variable named exactly "final_answer", e.g. {"seq_no": 9, "type": "assign", "parameters": {"final_answer": "\${summary}"}}.`,
    });
  }

  if (!jumpsIntact) return;
  plan.forEach((ins, i) => {
    if (reached[i] && reachedFinals.length > 0 && successors[i]!.includes(end)) {
      warnings.add({
        seq_no: ins.seqNo,
        path: planPath(ins.index),
        code: "runs_past_end",
        message: `After ${label(ins)}, execution runs past the last instruction without setting final_answer, so that path fails.`,
        hint: "Set final_answer at the end of that path, or add a jmp to a step that sets it.",
      });
    }
    if (!reached[i]) {
      const previous = plan[i - 1];
      const why =
        previous && defs[i - 1]!.includes(FINAL_ANSWER) && reached[i - 1]
          ? `it follows ${label(previous)}, which sets final_answer and so ends the branch`
          : "no path from the first instruction leads to it";
      warnings.add({
        seq_no: ins.seqNo,
        path: planPath(ins.index),
        code: "unreachable_instruction",
        message: `The instruction at ${label(ins)} is never run: ${why}.`,
        hint: "Remove it, or make a jmp target it.",
      });
    }
  });
}

function jumpTargets(ins: FlowInstruction): unknown[] {
  const p = isObject(ins.parameters) ? ins.parameters : {};
  const conditional = CONDITIONAL_KEYS.some((key) => Object.hasOwn(p, key));
  return conditional ? [p.jump_if_true, p.jump_if_false] : [p.target_seq];
}

function jumpTargetsResolve(
  ins: FlowInstruction,
  indexOfSeq: ReadonlyMap<number, number>,
): boolean {
  return jumpTargets(ins).every((t) => typeof t === "number" && indexOfSeq.has(t));
}

/** Array indices that may run next; `plan.length` stands for "past the end". */
function successorsOf(
  ins: FlowInstruction,
  indexOfSeq: ReadonlyMap<number, number>,
  setsFinalAnswer: boolean,
): number[] {
  if (ins.type === "jmp") {
    // A missing target is reported by the jump check; here its edge is just absent.
    return jumpTargets(ins).flatMap((t) => {
      const index = typeof t === "number" ? indexOfSeq.get(t) : undefined;
      return index === undefined ? [] : [index];
    });
  }
  return setsFinalAnswer ? [] : [ins.index + 1];
}

/**
 * For each instruction, the variables set on every path from the start to it; null
 * when no path reaches it. A worklist over the graph: a set is first the one that
 * reaches it first, then only shrinks, so the loop ends.
 */
function definitelySet(
  successors: readonly number[][],
  defs: readonly string[][],
  inputs: ReadonlySet<string>,
): (Set<string> | null)[] {
  const before: (Set<string> | null)[] = successors.map(() => null);
  if (successors.length === 0) return before;
  before[0] = new Set(inputs);
  const work = [0];
  const queued = successors.map((_, i) => i === 0);
  for (let i = work.pop(); i !== undefined; i = work.pop()) {
    queued[i] = false;
    const after = new Set([...before[i]!, ...defs[i]!]);
    for (const next of successors[i]!) {
      if (next >= successors.length) continue;
      const current = before[next] ?? null;
      let changed = false;
      if (current === null) {
        before[next] = new Set(after);
        changed = true;
      } else {
        for (const name of current) {
          if (!after.has(name)) {
            current.delete(name);
            changed = true;
          }
        }
      }
      if (changed && !queued[next]) {
        queued[next] = true;
        work.push(next);
      }
    }
  }
  return before;
}

interface ReferenceContext {
  plan: readonly FlowInstruction[];
  inputs: ReadonlySet<string>;
  setAt: ReadonlyMap<string, number[]>;
  problems: ProblemList;
  /** Where a reference to a variable not set on every path goes: problems, or warnings in `stackvm` mode. */
  unset: ProblemList;
  form: Parameters<typeof checkReferenceForm>[3];
}

/** Check 4 at one reachable instruction. Reasoning text is recorded, not resolved. */
function checkReferences(
  ins: FlowInstruction,
  set: ReadonlySet<string>,
  ctx: ReferenceContext,
): void {
  const p = ins.parameters;
  if (!isObject(p)) return;
  if (ins.type === "assign") {
    for (const [key, value] of Object.entries(p)) {
      for (const ref of findReferences(value)) {
        const path = planPath(ins.index, ["parameters", key, ...ref.where]);
        if (ref.name !== key && Object.hasOwn(p, ref.name)) {
          ctx.problems.add({
            seq_no: ins.seqNo,
            path,
            code: "assign_keys_reference_each_other",
            message: `In the assign at ${label(ins)}, "${key}" uses ${ref.text}, but "${ref.name}" is set by the same assign; the keys of one assign are set together, so "${key}" would see the old value.`,
            hint: `Split it into two assign steps: set "${ref.name}" first, then "${key}" in the next step.`,
          });
        } else if (checkReferenceForm(ins, ref, path, ctx.form)) {
          checkDefined(ins, ref, path, set, ctx);
        }
      }
    }
  } else if (ins.type === "calling" || ins.type === "jmp" || ins.type === "wait") {
    const [value, prefix] =
      ins.type === "calling" ? [p.tool_params, ["parameters", "tool_params"]] : [p, ["parameters"]];
    for (const ref of findReferences(value)) {
      const path = planPath(ins.index, [...prefix, ...ref.where]);
      if (checkReferenceForm(ins, ref, path, ctx.form)) checkDefined(ins, ref, path, set, ctx);
    }
  }
}

function checkDefined(
  ins: FlowInstruction,
  ref: { name: string; text: string },
  path: string,
  set: ReadonlySet<string>,
  ctx: ReferenceContext,
): void {
  if (set.has(ref.name)) return;
  const setters = ctx.setAt.get(ref.name);
  let problem: Omit<PlanProblem, "seq_no" | "path">;
  if (setters) {
    const where = listNames(
      setters.map((i) => label(ctx.plan[i]!)),
      10,
    );
    problem = {
      code: "unassigned_variable",
      message: `${ref.text} at ${label(ins)} uses "${ref.name}", which is not set on every path that reaches it (it is set at ${where}).`,
      hint: `Set "${ref.name}" on every path before ${label(ins)}, or move ${label(ins)} after the step that sets it.`,
    };
  } else {
    const known = [...new Set([...ctx.inputs, ...ctx.setAt.keys()])]
      .filter((name) => VariableName.safeParse(name).success)
      .sort();
    const near = closestName(ref.name, known);
    const setIt = `set "${ref.name}" in an earlier step (an assign, or a calling's output_vars)`;
    problem = {
      code: "unknown_variable",
      message: `${ref.text} at ${label(ins)} uses "${ref.name}", which no instruction sets and which is not a task input.`,
      hint: near
        ? `Did you mean "${near}"? Otherwise ${setIt}.`
        : known.length === 0
          ? `Either ${setIt}, or make it a task input.`
          : `Either ${setIt}, or use one of: ${listNames(known)}.`,
    };
  }
  if (ctx.unset !== ctx.problems) {
    problem.message += ` In StackVM compatibility mode the step runs with ${ref.text} left as text where it is not set.`;
  }
  ctx.unset.add({ seq_no: ins.seqNo, path, ...problem });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
