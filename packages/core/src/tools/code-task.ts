/**
 * `code_task`: the LLM writes a program for a task, the program runs in the
 * sandbox, and the LLM fixes it while it fails or while its result does not
 * answer the task, at most `maxFixRounds` times. The loop of the seeds (generate,
 * verify, run, fix), bounded, with every attempt in the commit.
 */
import { CodeTaskInput, DEFAULT_FIX_ROUNDS, MAX_FIX_ROUNDS } from "./code-task-input";
import type { Tool } from "./tool";

export { CodeTaskInput, DEFAULT_FIX_ROUNDS, MAX_FIX_ROUNDS } from "./code-task-input";
export type { CodeAttempt } from "./code-task-run";

export interface CodeTaskOptions {
  /** Fix rounds unless the input asks for fewer or more (default 3, at most 5). */
  maxFixRounds?: number;
}

/**
 * Builds the `code_task` tool.
 *
 * @example
 * const tool = createCodeTaskTool({ maxFixRounds: 2 });
 */
export function createCodeTaskTool(options: CodeTaskOptions = {}): Tool<CodeTaskInput> {
  const defaultRounds = Math.min(options.maxFixRounds ?? DEFAULT_FIX_ROUNDS, MAX_FIX_ROUNDS);
  return {
    name: "code_task",
    description:
      "Has the language model write a program (Python by default, or JavaScript) for a computation described in words, runs it in the sandbox, and lets the model fix it when it fails or its result does not answer the task. Returns {result, code, attempts}. Use it for exact work on data: calculations, statistics, parsing, transforming or checking structured inputs. Pass the data as `inputs` (each key becomes a variable). No network, no packages beyond the standard library.",
    get input() {
      return CodeTaskInput();
    },
    // The loop loads with the first call: most steps call other tools.
    run: async (input, context) =>
      (await import("./code-task-run")).runCodeTask(
        input,
        context,
        input.max_fix_rounds ?? defaultRounds,
      ),
  };
}

/** The `code_task` tool with the default rounds. */
export const codeTaskTool: Tool<CodeTaskInput> = createCodeTaskTool();
