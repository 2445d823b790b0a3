/**
 * The loop of `code_task` (generate, verify, run, fix), bounded, with every
 * attempt in the commit. A chunk of its own in a function's bundle: it loads
 * with the first call of the tool (`code-task.ts`), not at a cold start.
 */
import * as z from "zod";
import { StepError } from "../errors";
import { describeFiles, resolveSandboxFiles } from "../files/file-refs";
import type { LlmMessage } from "../ports/llm";
import type { SandboxFile } from "../sandbox/files";
import { checkSandboxCode } from "./code-check";
import { describeInputs, sandboxRules } from "./code-prompts";
import type { CodeTaskInput } from "./code-task-input";
import {
  callSandbox,
  fileSources,
  type SandboxRecord,
  type SandboxRun,
  sandboxFailureError,
} from "./sandbox-call";
import type { ToolContext, ToolResult } from "./tool";

/** The answer of the `code` schema: a whole program, or a verdict on the last result. */
export const CodeAnswer = z
  .object({
    done: z
      .boolean()
      .describe(
        "true only when reviewing a result that answers the task; false with new code otherwise",
      ),
    code: z.string().describe("The whole program (empty when done is true)."),
    explanation: z
      .string()
      .describe("One or two sentences: what the code does, or what was wrong."),
  })
  .strict();
export type CodeAnswer = z.infer<typeof CodeAnswer>;

/** One try, as the commit records it. */
export interface CodeAttempt {
  round: number;
  code: string;
  code_sha256: string;
  explanation: string;
  error: { code: string; message: string; traceback?: string } | null;
  /** The result, when its JSON takes at most 4 KiB. */
  result?: unknown;
  sandbox?: SandboxRecord;
  /** The model's review of a result that ran: did it answer the task? */
  verdict?: { done: boolean; explanation: string };
}
/** Runs `code_task` on a checked input with at most `fixRounds` fixes. */
export async function runCodeTask(
  input: CodeTaskInput,
  context: ToolContext,
  fixRounds: number,
): Promise<ToolResult> {
  const inputs = input.inputs ?? {};
  // References are read once, before the first round: every round runs on the same bytes.
  const files = input.files?.length
    ? await resolveSandboxFiles(input.files, fileSources(context))
    : [];
  const messages: LlmMessage[] = [
    { role: "system", content: sandboxRules(input.language) },
    { role: "user", content: taskMessage(input.task, inputs, context.goal, files) },
  ];
  const attempts: CodeAttempt[] = [];
  let answer = await ask(context, messages);
  for (let round = 0; ; round++) {
    const attempt = await tryCode(context, input, { inputs, files }, answer, round);
    attempts.push(attempt.record);
    const last = round >= fixRounds;
    if (attempt.run?.response.error?.retryable) {
      // The sandbox itself failed, not the code: the worker retries the step.
      throw sandboxFailureError(attempt.run, "code_task");
    }
    if (attempt.record.error) {
      if (last) throw failure(input, attempts, `the last error: ${attempt.record.error.message}`);
      messages.push({ role: "user", content: errorMessage(attempt.record) });
      answer = await ask(context, messages);
      continue;
    }
    messages.push({ role: "user", content: reviewMessage(attempt.run as SandboxRun) });
    const review = await ask(context, messages);
    attempt.record.verdict = { done: review.done, explanation: review.explanation };
    if (review.done) {
      const response = (attempt.run as SandboxRun).response;
      return {
        value: {
          result: response.result,
          code: answer.code,
          language: input.language,
          attempts: attempts.length,
          ...(attempt.run?.files.length ? { files: attempt.run.files } : {}),
        },
        details: { code_task: { task: input.task, language: input.language, attempts } },
      };
    }
    if (last) {
      throw failure(
        input,
        attempts,
        `the model judged that the last result does not answer the task: ${review.explanation}`,
      );
    }
    answer = review;
  }
}

async function ask(context: ToolContext, messages: LlmMessage[]): Promise<CodeAnswer> {
  const answer = await context.llm.json({
    purpose: "code",
    schemaName: "code",
    schema: CodeAnswer,
    messages,
  });
  messages.push({ role: "assistant", content: JSON.stringify(answer) });
  return answer;
}

/** Checks, stores and runs one program; never throws for a failing program. */
async function tryCode(
  context: ToolContext,
  input: CodeTaskInput,
  data: { inputs: Record<string, unknown>; files: SandboxFile[] },
  answer: CodeAnswer,
  round: number,
): Promise<{ record: CodeAttempt; run?: SandboxRun }> {
  const code = answer.code.trim();
  const base = { round, code: code.slice(0, 8_000), explanation: answer.explanation };
  const problems = code ? checkSandboxCode(input.language, code) : ["the answer has no code"];
  if (problems.length > 0) {
    const stored = await context.blobs.put(
      context.blobPrefix,
      new TextEncoder().encode(code),
      "text/plain",
    );
    return {
      record: {
        ...base,
        code_sha256: stored.sha256,
        error: {
          code: "refused",
          message: `the code cannot run in the sandbox: ${problems.join("; ")}`,
        },
      },
    };
  }
  const run = await callSandbox(context, { language: input.language, code, ...data });
  const { error, result } = run.response;
  const record: CodeAttempt = {
    ...base,
    code_sha256: run.record.code.sha256,
    sandbox: run.record,
    error: error
      ? {
          code: error.code,
          message: error.message,
          ...(error.traceback ? { traceback: error.traceback } : {}),
        }
      : null,
  };
  if (!error && JSON.stringify(result ?? null).length <= 4096) record.result = result;
  return { record, run };
}

function taskMessage(
  task: string,
  inputs: Record<string, unknown>,
  goal: string | null,
  files: readonly SandboxFile[],
): string {
  const parts = [`Task: ${task}`];
  if (goal) parts.push(`(This is one step of a larger goal: ${goal})`);
  parts.push(describeInputs(inputs));
  if (files.length > 0) parts.push(describeFiles(files));
  parts.push(
    'Answer with JSON: {"done": false, "code": "<the whole program>", "explanation": "<one sentence>"}.',
  );
  return parts.join("\n\n");
}

function errorMessage(attempt: CodeAttempt): string {
  const error = attempt.error;
  const lines = [`The program failed (${error?.code}): ${error?.message}`];
  if (error?.traceback) lines.push(`Traceback:\n${error.traceback.slice(-3000)}`);
  lines.push(
    'Fix it. Answer with JSON: {"done": false, "code": "<the whole fixed program>", "explanation": "<what was wrong>"}.',
  );
  return lines.join("\n\n");
}

function reviewMessage(run: SandboxRun): string {
  const { result, stdout } = run.response;
  const resultText = JSON.stringify(result ?? null);
  const lines = [`The program ran. Its result (JSON): ${cut(resultText, 6_000)}`];
  if (stdout) lines.push(`It printed:\n${cut(stdout, 3_000)}`);
  lines.push(
    'Does this result answer the task, completely and correctly? If yes, answer {"done": true, "code": "", "explanation": "<why>"}. If not, answer {"done": false, "code": "<the whole fixed program>", "explanation": "<what was wrong>"}.',
  );
  return lines.join("\n\n");
}

function cut(text: string, chars: number): string {
  return text.length <= chars
    ? text
    : `${text.slice(0, chars)}… (${text.length - chars} more characters)`;
}

function failure(input: CodeTaskInput, attempts: CodeAttempt[], why: string): StepError {
  return new StepError(
    "code_task_failed",
    `code_task: no working ${input.language} code after ${attempts.length} attempts; ${why}`,
    { code_task: { task: input.task, language: input.language, attempts } },
  );
}
