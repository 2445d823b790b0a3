/**
 * The one check the console makes on a plan before it sends one: that its text
 * is JSON (the API cannot be asked about text it cannot parse). Everything else
 * (the shape of each instruction, tools, jump targets, references, StackVM's
 * forms) is the API's validator's, through `POST /v1/plans/validate` or the 422
 * of the request itself, so the console and the API never disagree on a plan.
 */
import type { PlanProblem } from "@stackvm/core";

/** Where a JSON.parse error points, as "line L, column C" when the engine says a position. */
function position(text: string, error: Error): string {
  const at = /position (\d+)/.exec(error.message);
  if (!at) return "";
  const offset = Number(at[1]);
  const before = text.slice(0, offset).split("\n");
  return ` (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1})`;
}

/**
 * Parses a plan's text. Returns the parsed value (whatever JSON it is: the API
 * says what is wrong with its shape), or the syntax problem.
 *
 * @example
 * checkPlanText('[{"seq_no": 0, "type": "assign", "parameters": {"final_answer": 1}}]').plan
 */
export function checkPlanText(text: string): { plan: unknown; problems: PlanProblem[] } {
  try {
    return { plan: JSON.parse(text), problems: [] };
  } catch (e) {
    return {
      plan: null,
      problems: [
        {
          seq_no: null,
          path: "",
          code: "malformed_json",
          message: `The plan is not valid JSON${position(text, e as Error)}: ${(e as Error).message}`,
          hint: "Fix the JSON syntax: quotes around names and strings, commas between items, no trailing comma.",
        },
      ],
    };
  }
}
