/**
 * Parallel groups (plan language 1.1): consecutive `calling` instructions that do
 * not read each other's outputs, with no jump landing inside them, may run at
 * once; their commits still come one per instruction, in plan order
 * (`vm/group.ts` runs them).
 *
 * Groups are found, not declared: every maximal run of such instructions is one.
 * A plan may also mark a group explicitly with the same `"group": "name"` on
 * consecutive `calling` instructions: the marked run is exactly one group (the
 * validator refuses a mark that could not be one), and a marked instruction never
 * joins an unmarked neighbour. An instruction with a name of its own runs alone.
 *
 * Never in a group: a call that waits (`ask_human`) and a call that sets
 * `final_answer` (it ends the branch, so what follows must not have run).
 */

import { FINAL_ANSWER } from "./plan-values";
import { findReferences } from "./references";
import type { Instruction, Plan } from "./schema";

/** Members run at once per group unless the namespace says otherwise (`parallel_width`). */
export const DEFAULT_GROUP_WIDTH = 4;
/** The widest a namespace may set. */
export const MAX_GROUP_WIDTH = 16;

/** Tools that never run in a group: the branch waits for them. */
const SOLO_TOOLS: ReadonlySet<string> = new Set(["ask_human"]);

/** A group: two or more instructions, by seq_no in plan order. */
export interface PlanGroup {
  members: number[];
  /** The plan's `"group"` mark, or null when the group was found. */
  name: string | null;
}

/** A problem with a marked group, for the validator. */
export interface GroupProblem {
  seq_no: number;
  index: number;
  code: "group_not_parallel" | "group_reads_member" | "group_jump_inside" | "group_split";
  message: string;
  hint: string;
}

const outputsOf = (i: Instruction): string[] => {
  if (i.type !== "calling") return [];
  const vars = i.parameters.output_vars;
  return vars === undefined ? [] : typeof vars === "string" ? [vars] : vars;
};

/** Why this instruction cannot be in a group, or null. */
function soloReason(i: Instruction): string | null {
  if (i.type !== "calling") return `it is a ${i.type}, and only calling instructions run at once`;
  if (SOLO_TOOLS.has(i.parameters.tool_name)) return `${i.parameters.tool_name} waits for a person`;
  if (outputsOf(i).includes(FINAL_ANSWER)) return "it sets final_answer, which ends the branch";
  return null;
}

function jumpTargets(plan: Plan): Set<number> {
  const targets = new Set<number>();
  for (const i of plan) {
    if (i.type !== "jmp") continue;
    const p = i.parameters;
    if ("target_seq" in p) targets.add(p.target_seq);
    else targets.add(p.jump_if_true).add(p.jump_if_false);
  }
  return targets;
}

const markOf = (i: Instruction): string | null => (i.type === "calling" ? (i.group ?? null) : null);

/** Every group of the plan (two or more members), in plan order. */
export function findGroups(plan: Plan): PlanGroup[] {
  const targets = jumpTargets(plan);
  const groups: PlanGroup[] = [];
  let current: { members: number[]; name: string | null; written: Set<string> } | null = null;
  const close = () => {
    if (current && current.members.length > 1) {
      groups.push({ members: current.members, name: current.name });
    }
    current = null;
  };
  for (const i of plan) {
    if (soloReason(i) !== null) {
      close();
      continue;
    }
    const name = markOf(i);
    const reads = findReferences(i.parameters).map((r) => r.name);
    const c = current as { members: number[]; name: string | null; written: Set<string> } | null;
    const joins =
      c !== null &&
      c.name === name &&
      !targets.has(i.seq_no) &&
      !reads.some((n) => c.written.has(n));
    if (!joins) {
      close();
      current = { members: [], name, written: new Set() };
    }
    const g = current as unknown as { members: number[]; written: Set<string> };
    g.members.push(i.seq_no);
    for (const n of outputsOf(i)) g.written.add(n);
  }
  close();
  return groups;
}

/**
 * The members that run at once from `pc`: the rest of the group holding `pc`
 * (from `pc` on, so that a fork inside a group runs only what follows), at most
 * `width` of them; null when fewer than two would.
 */
/**
 * The groups of each plan the VM steps through, found once: a plan version is
 * immutable and the store hands out one object per version, so a calling step
 * does not analyse the whole plan again.
 */
const groupsOf = new WeakMap<Plan, PlanGroup[]>();

export function groupRunAt(plan: Plan, pc: number, width: number): number[] | null {
  if (width < 2) return null;
  const at = plan.find((i) => i.seq_no === pc);
  if (at?.type !== "calling") return null;
  let groups = groupsOf.get(plan);
  if (!groups) {
    groups = findGroups(plan);
    groupsOf.set(plan, groups);
  }
  for (const group of groups) {
    const index = group.members.indexOf(pc);
    if (index < 0) continue;
    const run = group.members.slice(index, index + width);
    return run.length > 1 ? run : null;
  }
  return null;
}

/**
 * Checks the plan's `"group"` marks: each name must mark consecutive calling
 * instructions that could run at once. One problem per mark that cannot.
 */
export function checkGroupMarks(plan: Plan): GroupProblem[] {
  const problems: GroupProblem[] = [];
  const targets = jumpTargets(plan);
  const seen = new Map<string, number>();
  let previous: string | null = null;
  const written = new Map<string, Set<string>>();
  plan.forEach((i, index) => {
    const name = i.type === "calling" ? (i.group ?? null) : null;
    const at = { seq_no: i.seq_no, index };
    if (name === null) {
      previous = null;
      return;
    }
    const solo = soloReason(i);
    if (solo !== null) {
      problems.push({
        ...at,
        code: "group_not_parallel",
        message: `The instruction ${i.seq_no} is marked group "${name}", but it cannot run at once with others: ${solo}.`,
        hint: `Remove "group" from it.`,
      });
    }
    const first = seen.get(name);
    if (first !== undefined && previous !== name) {
      problems.push({
        ...at,
        code: "group_split",
        message: `The group "${name}" is not consecutive: instruction ${i.seq_no} is apart from its other members.`,
        hint: "Put a group's members next to each other, or give the separate runs different names.",
      });
    }
    if (first !== undefined && previous === name && targets.has(i.seq_no)) {
      problems.push({
        ...at,
        code: "group_jump_inside",
        message: `A jmp lands on instruction ${i.seq_no}, inside the group "${name}".`,
        hint: "A jump may land only on the first member of a group: split the group there.",
      });
    }
    const outs = written.get(name) ?? new Set<string>();
    if (previous === name) {
      const read = findReferences(i.parameters)
        .map((r) => r.name)
        .find((n) => outs.has(n));
      if (read !== undefined) {
        problems.push({
          ...at,
          code: "group_reads_member",
          message: `The instruction ${i.seq_no} reads \${${read}}, an output of an earlier member of the group "${name}"; members run at once.`,
          hint: "Move it after the group, or out of it.",
        });
      }
    }
    for (const n of outputsOf(i)) outs.add(n);
    written.set(name, outs);
    if (first === undefined) seen.set(name, i.seq_no);
    previous = name;
  });
  return problems;
}
