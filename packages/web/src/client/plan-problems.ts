/**
 * Places each problem of a rejected plan (HTTP 422, `details.problems[]`) at the
 * instruction it concerns, so the console shows it there and not in a list far
 * from the text the user must fix.
 */
import type { PlanProblem } from "@stackvm/core";

export interface PlacedProblems {
  /** Problems by the instruction's index in the plan array. */
  byIndex: Map<number, PlanProblem[]>;
  /** Problems of the plan as a whole, or of no instruction that exists. */
  general: PlanProblem[];
}

/** The problems in an API error's details, or null when it has none. */
export function problemsOf(details: unknown): PlanProblem[] | null {
  const problems = (details as { problems?: unknown } | null | undefined)?.problems;
  if (!Array.isArray(problems)) return null;
  return problems.filter(
    (p): p is PlanProblem =>
      typeof p === "object" && p !== null && typeof (p as PlanProblem).message === "string",
  );
}

/**
 * Places problems: by the index at the head of `path` (`[2].parameters...`),
 * else by `seq_no`, else with the plan as a whole.
 *
 * @example
 * placeProblems(plan, [{ seq_no: 1, path: "[1].parameters.tool_name", ... }]).byIndex.get(1)
 */
export function placeProblems(
  plan: readonly unknown[],
  problems: readonly PlanProblem[],
): PlacedProblems {
  const byIndex = new Map<number, PlanProblem[]>();
  const general: PlanProblem[] = [];
  const indexOfSeq = new Map<number, number>();
  plan.forEach((instruction, index) => {
    const seq = (instruction as { seq_no?: unknown } | null)?.seq_no;
    if (typeof seq === "number" && !indexOfSeq.has(seq)) indexOfSeq.set(seq, index);
  });
  for (const problem of problems) {
    const match = /^\[(\d+)\]/.exec(problem.path ?? "");
    let index = match ? Number(match[1]) : undefined;
    if (index !== undefined && index >= plan.length) index = undefined;
    if (index === undefined && typeof problem.seq_no === "number") {
      index = indexOfSeq.get(problem.seq_no);
    }
    if (index === undefined) general.push(problem);
    else byIndex.set(index, [...(byIndex.get(index) ?? []), problem]);
  }
  return { byIndex, general };
}
