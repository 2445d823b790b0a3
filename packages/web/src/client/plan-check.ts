/**
 * The checks the console makes on a plan before it sends one: JSON syntax and
 * the shape of each instruction. The API's validator does the rest (tools,
 * jump targets, references) and answers 422; both kinds of problem are shown
 * the same way, at their instruction.
 */
import type { PlanProblem } from "@stackvm/core";

const TYPES = new Set(["assign", "calling", "jmp", "reasoning"]);

const problem = (
  index: number | null,
  seq_no: number | null,
  path: string,
  message: string,
  hint: string,
): PlanProblem => ({
  seq_no,
  path: index === null ? path : `[${index}]${path}`,
  code: "shape",
  message,
  hint,
});

/** Where a JSON.parse error points, as "line L, column C" when the engine says a position. */
function position(text: string, error: Error): string {
  const at = /position (\d+)/.exec(error.message);
  if (!at) return "";
  const offset = Number(at[1]);
  const before = text.slice(0, offset).split("\n");
  return ` (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1})`;
}

/**
 * Parses and checks a plan's text. Returns the plan, or the problems found.
 *
 * @example
 * checkPlanText('[{"seq_no": 0, "type": "assign", "parameters": {"final_answer": 1}}]').plan
 */
export function checkPlanText(text: string): { plan: unknown[] | null; problems: PlanProblem[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return {
      plan: null,
      problems: [
        problem(
          null,
          null,
          "",
          `The plan is not valid JSON${position(text, e as Error)}: ${(e as Error).message}`,
          "Fix the JSON syntax: quotes around names and strings, commas between items, no trailing comma.",
        ),
      ],
    };
  }
  const problems = checkPlanShape(value);
  return { plan: Array.isArray(value) ? value : null, problems };
}

/** Shape checks of a parsed plan. */
export function checkPlanShape(value: unknown): PlanProblem[] {
  if (!Array.isArray(value)) {
    return [
      problem(
        null,
        null,
        "",
        "A plan is a JSON array of instructions.",
        "Wrap the instructions in [ ].",
      ),
    ];
  }
  if (value.length === 0) {
    return [problem(null, null, "", "The plan has no instructions.", "Add at least one.")];
  }
  const out: PlanProblem[] = [];
  const seen = new Map<number, number>();
  value.forEach((item, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      out.push(
        problem(
          index,
          null,
          "",
          `Item ${index} is not an instruction object.`,
          'Write {"seq_no", "type", "parameters"}.',
        ),
      );
      return;
    }
    const { seq_no, type, parameters } = item as Record<string, unknown>;
    const seq =
      typeof seq_no === "number" && Number.isInteger(seq_no) && seq_no >= 0 ? seq_no : null;
    if (seq === null) {
      out.push(
        problem(
          index,
          null,
          ".seq_no",
          `Item ${index} has no valid seq_no.`,
          "Give it a whole number of 0 or more, unique in the plan.",
        ),
      );
    } else if (seen.has(seq)) {
      out.push(
        problem(
          index,
          seq,
          ".seq_no",
          `seq_no ${seq} is used twice (items ${seen.get(seq)} and ${index}).`,
          "Give each instruction its own seq_no.",
        ),
      );
    } else {
      seen.set(seq, index);
    }
    if (typeof type !== "string" || !TYPES.has(type)) {
      out.push(
        problem(
          index,
          seq,
          ".type",
          `Item ${index} has type ${JSON.stringify(type)}.`,
          "Use assign, calling, jmp or reasoning.",
        ),
      );
    }
    if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) {
      out.push(
        problem(
          index,
          seq,
          ".parameters",
          `Item ${index} has no parameters object.`,
          'Add "parameters": { ... } as its type needs.',
        ),
      );
    }
  });
  return out;
}
