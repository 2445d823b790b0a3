/**
 * The findings of plan validation: what is wrong, where, and how to fix it. They go
 * to an integrator (HTTP 422) or back to the planner LLM for a repair, so every
 * problem names its place in the plan and carries a hint.
 */

/** One finding of `validatePlan`. */
export interface PlanProblem {
  /** The instruction's seq_no, or null for the plan as a whole (or when it has none). */
  seq_no: number | null;
  /** A JSON path into the submitted plan, e.g. `[2].parameters.tool_name`; "" for the plan. */
  path: string;
  /** Stable, for programs: `unknown_tool`, `unassigned_variable`, ... */
  code: string;
  /** What is wrong, in a sentence that stands on its own. */
  message: string;
  /** How to fix it. */
  hint: string;
}

/** A longer list helps no one: the rest is counted in one closing entry. */
export const MAX_LISTED_PROBLEMS = 100;

/** Collects problems (or warnings) up to {@link MAX_LISTED_PROBLEMS}. */
export class ProblemList {
  private readonly items: PlanProblem[] = [];
  private omitted = 0;

  add(problem: PlanProblem): void {
    if (this.items.length < MAX_LISTED_PROBLEMS) this.items.push(problem);
    else this.omitted += 1;
  }

  get size(): number {
    return this.items.length + this.omitted;
  }

  list(): PlanProblem[] {
    if (this.omitted === 0) return [...this.items];
    return [
      ...this.items,
      {
        seq_no: null,
        path: "",
        code: "more_not_listed",
        message: `${this.omitted} more like these are not listed.`,
        hint: "Fix the ones listed; validating again lists the rest.",
      },
    ];
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Formats a path into the plan: `[2].parameters.tool_params["content-type"]`.
 *
 * @example
 * planPath(2, ["parameters", "output_vars", 0]) // "[2].parameters.output_vars[0]"
 */
export function planPath(index: number | null, keys: readonly PropertyKey[] = []): string {
  let path = index === null ? "" : `[${index}]`;
  for (const key of keys) {
    if (typeof key === "number") path += `[${key}]`;
    else if (typeof key === "string" && IDENTIFIER.test(key)) path += path === "" ? key : `.${key}`;
    else path += `[${JSON.stringify(String(key))}]`;
  }
  return path;
}

/** Lists names for a message, at most `max` of them. */
export function listNames(names: Iterable<string>, max = 30): string {
  const all = [...names];
  const shown = all.slice(0, max).join(", ");
  return all.length > max ? `${shown} and ${all.length - max} more` : shown;
}

/** How messages name an instruction: by seq_no when it has a valid one. */
export function label(instruction: { index: number; seqNo: number | null }): string {
  return instruction.seqNo === null
    ? `position [${instruction.index}]`
    : `seq_no ${instruction.seqNo}`;
}

/**
 * The candidate that a name most likely misspells (at most two edits, ignoring case),
 * or undefined. Planner LLMs write `final_answers` or `Final_Answer`; saying so makes
 * the repair round short.
 *
 * @example
 * closestName("final_answr", ["facts", "final_answer"]) // "final_answer"
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length < 4) return undefined;
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    if (candidate === name || Math.abs(candidate.length - name.length) >= bestDistance) continue;
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
