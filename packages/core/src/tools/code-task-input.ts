/**
 * The input of `code_task` and its bounds: what the planner writes and the
 * step checks, apart from the loop that runs it (`code-task-run.ts`), which
 * loads only when a step calls the tool.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { SandboxFilesInput } from "../files/file-inputs";
import { SandboxLanguage } from "../sandbox/files";

/** Fix rounds when neither the tool nor the input says otherwise. */
export const DEFAULT_FIX_ROUNDS = 3;
/** The most fix rounds any input may ask for. */
export const MAX_FIX_ROUNDS = 5;

export const CodeTaskInput = buildOnce(() =>
  z
    .object({
      task: z
        .string()
        .min(1, "task must say what the code computes")
        .max(20_000, "task is longer than 20,000 characters: pass data as inputs")
        .describe(
          "What the program must compute, in plain words, including the shape of the answer.",
        ),
      language: SandboxLanguage().default("python").describe("'python' (default) or 'javascript'."),
      inputs: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("Data the program works on: each key becomes a variable of the program."),
      files: SandboxFilesInput().optional(),
      max_fix_rounds: z
        .number()
        .int()
        .min(0)
        .max(MAX_FIX_ROUNDS)
        .optional()
        .describe(`How many times the model may fix the code (default ${DEFAULT_FIX_ROUNDS}).`),
    })
    .strict(),
);
export type CodeTaskInput = z.infer<ReturnType<typeof CodeTaskInput>>;
