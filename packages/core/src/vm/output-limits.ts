/**
 * What one step may write, checked once, after the instruction ran and before
 * anything is stored: each variable at most {@link MAX_VARIABLE_BYTES} as JSON,
 * all the variables a step sets at most {@link MAX_STEP_OUTPUT_BYTES}, and the
 * shape every stored value must have (`plan/json-shape.ts`). A step over a
 * limit fails once as a step error, with the limit named, and takes the plan's
 * error path (a plan update, or the end of the branch); it is not retried.
 */
import { StepError } from "../errors";
import { shapeProblem } from "../plan/json-shape";
import { jsonSize } from "../store/values";

/** The largest value one variable may hold, as JSON in bytes (5 MiB). */
export const MAX_VARIABLE_BYTES = 5 * 1024 * 1024;

/** The most one step may write to its variables together, as JSON in bytes (8 MiB). */
export const MAX_STEP_OUTPUT_BYTES = 8 * 1024 * 1024;

/**
 * Throws a `StepError` when the outputs of a step break a limit.
 *
 * @example
 * checkOutputs({ text: "x".repeat(5 * 1024 * 1024) }) // throws StepError variable_too_large
 */
export function checkOutputs(outputs: Record<string, unknown>): void {
  let total = 0;
  for (const [name, value] of Object.entries(outputs)) {
    const problem = shapeProblem(value, `the value of '${name}'`);
    if (problem) {
      throw new StepError(`output_${problem.code}`, problem.message, {
        variable: name,
        path: problem.path,
      });
    }
    const size = jsonSize(value);
    if (size > MAX_VARIABLE_BYTES) {
      throw new StepError(
        "variable_too_large",
        `the value of '${name}' is ${size} bytes as JSON, over the limit of ${MAX_VARIABLE_BYTES} bytes per variable; keep less (a page, a summary, a filter)`,
        { variable: name, bytes: size, limit: MAX_VARIABLE_BYTES },
      );
    }
    total += size;
  }
  if (total > MAX_STEP_OUTPUT_BYTES) {
    throw new StepError(
      "step_output_too_large",
      `the step sets ${Object.keys(outputs).length} variables of ${total} bytes as JSON together, over the limit of ${MAX_STEP_OUTPUT_BYTES} bytes per step; split the work over several steps`,
      { bytes: total, limit: MAX_STEP_OUTPUT_BYTES },
    );
  }
}
