/**
 * `ask_human` (plan language 1.1): the branch waits (status `waiting`) until a
 * person answers through the API, the resume URL of the `task.waiting` webhook,
 * the console or the CLI; the answer, valid against `schema`, becomes the output
 * variable. After `timeout_seconds` the `default` is used, or the step fails
 * with `human_timeout` (which may trigger a plan update). An approval is a
 * question with `{"type": "boolean"}` as its schema.
 *
 * The tool itself only reads the branch's wait (`ToolContext.waiting`): the step
 * protocol puts the branch in `waiting` when it throws `WaitRequest`
 * (`vm/wait.ts`), and `WaitService` stores the answer.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { StepError, ValidationError } from "../errors";
import { compileJsonSchema, loadJsonSchemaCompiler } from "../json-schema/compile";
import { type Tool, WaitRequest } from "./tool";

/** The longest a question may wait for its answer: 30 days. */
export const MAX_QUESTION_SECONDS = 30 * 24 * 60 * 60;

export const AskHumanInput = buildOnce(() =>
  z
    .object({
      question: z.string().min(1).max(10_000).describe("What to ask; shown as it is"),
      schema: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          'JSON Schema of the answer; default {"type": "string"}. An approval: {"type": "boolean"}',
        ),
      timeout_seconds: z
        .number()
        .int()
        .min(1)
        .max(MAX_QUESTION_SECONDS)
        .optional()
        .describe("Seconds to wait for the answer; without it the branch waits until answered"),
      default: z
        .unknown()
        .optional()
        .describe("The answer used when the timeout passes; without it the step fails then"),
    })
    .strict()
    .superRefine((input, ctx) => {
      const problem = answerSchemaProblem(input.schema);
      if (problem) {
        ctx.addIssue({ code: "custom", path: ["schema"], message: problem });
        return;
      }
      if (input.default !== undefined) {
        const checked = checkAnswer(input.schema, input.default);
        if (!checked.ok) {
          ctx.addIssue({
            code: "custom",
            path: ["default"],
            message: `the default does not match the schema: ${checked.message}`,
          });
        }
      }
    }),
);
export type AskHumanInput = z.infer<ReturnType<typeof AskHumanInput>>;

const STRING_ANSWER = { type: "string" };

/**
 * The schema's problem as a sentence, or null when it is a JSON Schema this
 * service can check answers with (bounded, patterns in linear time: the answer
 * arrives on an unauthenticated resume URL).
 */
export function answerSchemaProblem(schema: Record<string, unknown> | undefined): string | null {
  if (schema === undefined) return null;
  try {
    compileJsonSchema(schema, "the schema");
    return null;
  } catch (error) {
    // Only the schema's own fault is a problem of the plan (not a compiler left unloaded).
    if (!(error instanceof ValidationError)) throw error;
    return `the schema is not a JSON Schema this service can check: ${(error as Error).message}`;
  }
}

/**
 * Checks an answer against the question's JSON Schema (a string when none).
 * The JSON Schema compiler must be loaded (`loadJsonSchemaCompiler`).
 *
 * @example
 * checkAnswer({ type: "boolean" }, "yes") // { ok: false, message: "✖ Invalid input: expected boolean, received string" }
 */
export function checkAnswer(
  schema: Record<string, unknown> | undefined,
  answer: unknown,
): { ok: true; value: unknown } | { ok: false; message: string } {
  let parser: z.ZodType;
  try {
    parser = compileJsonSchema(schema ?? STRING_ANSWER, "the question's schema");
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { ok: false, message: (error as Error).message };
  }
  const parsed = parser.safeParse(answer);
  if (parsed.success) return { ok: true, value: answer };
  return { ok: false, message: z.prettifyError(parsed.error) };
}

export const askHumanTool: Tool<AskHumanInput> = {
  name: "ask_human",
  description:
    'Ask a person a question and wait for the answer (status `waiting`, nothing runs meanwhile); the answer, checked against `schema`, becomes the output variable. For an approval use the schema {"type": "boolean"}.',
  get input() {
    return AskHumanInput();
  },
  // Its input's schema and default are checked with the JSON Schema compiler.
  prepare: loadJsonSchemaCompiler,
  async run(input, context) {
    const waiting = context.waiting;
    if (waiting?.kind === "input" && waiting.answer) {
      return {
        value: waiting.answer.value,
        details: { answered_by: waiting.answer.via, answered_at: waiting.answer.at },
      };
    }
    const now = context.now ?? Date.now();
    if (
      waiting?.kind === "input" &&
      waiting.expires_at !== undefined &&
      now >= Date.parse(waiting.expires_at)
    ) {
      if (input.default !== undefined) {
        return { value: input.default, details: { timed_out: true, used_default: true } };
      }
      throw new StepError(
        "human_timeout",
        `nobody answered "${input.question.slice(0, 200)}" within ${input.timeout_seconds} s and it has no default; give ask_human a "default" or a longer "timeout_seconds"`,
      );
    }
    throw new WaitRequest({
      kind: "input",
      question: input.question,
      schema: input.schema ?? STRING_ANSWER,
      ...(input.timeout_seconds === undefined
        ? {}
        : { expires_at: new Date(now + input.timeout_seconds * 1000).toISOString() }),
    });
  },
};
