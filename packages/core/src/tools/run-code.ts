/**
 * `run_code`: runs JavaScript or Python that the plan gives, in the sandbox (time
 * and memory limits, no network, no host access). The code, its output and its
 * files are stored content-addressed, and the commit keeps their references.
 *
 * The output variable holds the program's result, as the plan means it
 * (`${total}`, not `${total.result}`); what it printed is in the commit
 * (`details.stdout_tail`, and the whole by reference in `details.sandbox`), and
 * `"output": "all"` makes the variable `{result, stdout, stderr, files}`.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { SandboxFilesInput } from "../files/file-inputs";
import { SandboxLanguage } from "../sandbox/files";
import { callSandbox, sandboxFailureError } from "./sandbox-call";
import type { Tool, ToolContext, ToolResult } from "./tool";

export const RunCodeInput = buildOnce(() =>
  z
    .object({
      language: SandboxLanguage().describe(
        "'javascript' (QuickJS) or 'python' (CPython 3 in Pyodide; with numpy, pandas, matplotlib and openpyxl in CPython 3.11 when the code imports one of them).",
      ),
      code: z
        .string()
        .min(1, "code must not be empty")
        .max(200_000, "code is longer than 200,000 characters")
        .describe(
          "The program. Its result is the value of its last expression, or of `return` (JavaScript), or of a variable named `result`.",
        ),
      inputs: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          "Values the code gets: each key is a variable of the program, and all are in `inputs`.",
        ),
      files: SandboxFilesInput().optional(),
      output: z
        .enum(["result", "all"])
        .default("result")
        .describe(
          "What the output variable holds: 'result' (default), the program's result; 'all', {result, stdout, stderr, files} to read what it printed or the files it wrote.",
        ),
    })
    .strict(),
);
export type RunCodeInput = z.infer<ReturnType<typeof RunCodeInput>>;

/** How much of stdout and stderr the commit shows as text (the whole is stored by reference). */
const TAIL = 2_000;

/** The `run_code` tool. */
export const runCodeTool: Tool<RunCodeInput> = {
  name: "run_code",
  description:
    "Runs a short JavaScript or Python program in a locked-down sandbox and returns its result (with output: 'all', {result, stdout, stderr, files}). Use it for exact computation: arithmetic, statistics, parsing, sorting, date math, text processing, and data analysis (Python: pandas, numpy, charts with matplotlib saved by plt.savefig('chart.png'), Excel files with openpyxl). The result is the value of the last expression (or `return` in JavaScript, or a variable `result`). Inputs: each key of `inputs` is a variable. Limits: 10 s, 256 MiB, 1 MiB of output by default; no network, no host files, no packages beyond the standard library with numpy, pandas, matplotlib and openpyxl (Python) or the built-ins (JavaScript). Files written to the working folder (Python: open('out.csv', 'w'); JavaScript: files.write('out.csv', text)) come back as references with output: 'all', which a later step passes on in its `files`. Files: `files` puts uploaded files ({\"$file\": id}, or a task input that is one) and earlier steps' files (${run.files.0}) in the working folder by reference.",
  get input() {
    return RunCodeInput();
  },
  run: runCode,
};

async function runCode(input: RunCodeInput, context: ToolContext): Promise<ToolResult> {
  const run = await callSandbox(context, {
    language: input.language,
    code: input.code,
    ...(input.inputs ? { inputs: input.inputs } : {}),
    ...(input.files ? { files: input.files } : {}),
  });
  if (run.response.error) throw sandboxFailureError(run, "run_code");
  const { result, stdout, stderr } = run.response;
  const details = {
    sandbox: run.record,
    ...(stdout ? { stdout_tail: stdout.slice(-TAIL) } : {}),
    ...(stderr ? { stderr_tail: stderr.slice(-TAIL) } : {}),
    ...(run.files.length ? { files: run.files } : {}),
  };
  if (input.output === "all") {
    return { value: { result, stdout, stderr, files: run.files }, details };
  }
  return { value: result, details };
}
