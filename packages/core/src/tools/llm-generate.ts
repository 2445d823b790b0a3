/**
 * `llm_generate`: one free-text (or JSON) answer from the LLM. The system message
 * carries the task's goal and response format, so that text written for the
 * final answer comes out in the task's language without every prompt repeating it.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import type { ResponseFormat } from "../model";
import type { Tool } from "./tool";

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

/** The `llm_generate` tool. */
export const llmGenerateTool: Tool<LlmGenerateInput> = {
  name: "llm_generate",
  description:
    "Asks the language model for a text: summaries, drafts, translations, extraction, classification, answers from given material. Input: prompt (required), context (optional material), response_format (optional shape of the answer). Result: the generated text as a string, or, when response_format asks for JSON, the parsed JSON value. Text is written in the task's language (its response_format 'lang'). The model has no internet access and knows only what the prompt and context give it plus its training.",
  get input() {
    return LlmGenerateInput();
  },
  // The call and its prompts load with the first call: most steps call other tools.
  run: async (input, context) =>
    (await import("./llm-generate-run")).runLlmGenerate(input, context),
};

/**
 * True when the requested format asks for JSON: a string or object that mentions
 * JSON, or an object carrying a JSON Schema.
 *
 * @example
 * asksForJson("a JSON array of names") // true
 * asksForJson({ lang: "French" }) // false
 */
export function asksForJson(format: LlmGenerateInput["response_format"]): boolean {
  if (format === undefined) return false;
  if (typeof format === "string") return /\bjson\b/i.test(format);
  if ("schema" in format || "json_schema" in format) return true;
  return /\bjson/i.test(JSON.stringify(format));
}

/**
 * The JSON Schema a response format carries, named for the request: `{schema}`,
 * `{json_schema: {name, schema}}` (OpenAI's own shape, with or without `type`),
 * or `{json_schema: <schema>}`. Undefined when it carries none.
 *
 * @example
 * userJsonSchema({ type: "json_schema", json_schema: { name: "city", schema: { type: "object" } } })
 * // { name: "city", schema: { type: "object" } }
 */
export function userJsonSchema(
  format: LlmGenerateInput["response_format"],
): { name: string; schema: Record<string, unknown> } | undefined {
  if (format === undefined || typeof format === "string") return undefined;
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  const named = (name: unknown) =>
    typeof name === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(name) ? name : "response";
  if (isObject(format.schema)) return { name: named(format.name), schema: format.schema };
  const inner = format.json_schema;
  if (!isObject(inner)) return undefined;
  if (isObject(inner.schema)) return { name: named(inner.name), schema: inner.schema };
  if ("type" in inner || "properties" in inner) return { name: named(format.name), schema: inner };
  return undefined;
}

/** The task's language, from `lang` or `language` (keys are case-insensitive). */
export function taskLanguage(format: ResponseFormat): string | undefined {
  for (const [key, value] of Object.entries(format)) {
    if (/^lang(uage)?$/i.test(key) && typeof value === "string" && value.trim())
      return value.trim();
  }
  return undefined;
}
