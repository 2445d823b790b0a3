/**
 * What `llm_generate` takes: apart from the tool (llm-generate.ts) and what it
 * does (llm-generate-run.ts), which both read it.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";

export const LlmGenerateInput = buildOnce(() =>
  z
    .object({
      prompt: z
        .string()
        .min(1, "prompt must not be empty")
        .max(
          100_000,
          "prompt is longer than 100,000 characters: pass large data as context, or summarize it first",
        )
        .describe("What to write or answer."),
      context: z
        .unknown()
        .optional()
        .describe(
          "Material the answer is based on: text, or any JSON value (shown to the model as JSON).",
        ),
      response_format: z
        .union([z.string().min(1), z.record(z.string(), z.unknown())])
        .optional()
        .describe(
          'The shape of the answer, in words or as an object. When it asks for JSON (mentions \'json\', e.g. "JSON array of strings" or {"type": "json_object"}, or carries a JSON Schema under \'schema\'), the result is the parsed JSON value instead of text.',
        ),
    })
    .strict(),
);
export type LlmGenerateInput = z.infer<ReturnType<typeof LlmGenerateInput>>;
