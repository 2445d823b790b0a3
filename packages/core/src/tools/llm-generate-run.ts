/**
 * What `llm_generate` does (llm-generate.ts), loaded by its first call: the
 * prompts (the task's goal, response format and language in the system
 * message) and the call, free text or JSON.
 */
import * as z from "zod";
import { StepError } from "../errors";
import type { ResponseFormat } from "../model";
import type { LlmMessage } from "../ports/llm";
import { ANSWER_SCHEMA_KEY } from "../record-fields";
import type { LlmGenerateInput } from "./llm-generate-input";
import type { ToolContext, ToolResult } from "./tool";

/** Runs `llm_generate`: one answer, or an object with the calling's output vars as keys. */
export async function runLlmGenerate(
  input: LlmGenerateInput,
  context: ToolContext,
): Promise<ToolResult> {
  if (context.outputVars && context.outputVars.length > 1) return runForKeys(input, context);
  const answerSchema = finalAnswerSchema(input, context);
  const json = answerSchema !== undefined || asksForJson(input.response_format);
  const user = userPrompt(input);
  const messages: LlmMessage[] = [
    { role: "system", content: systemPrompt(context.goal, context.responseFormat, json, user) },
    { role: "user", content: user },
  ];
  const schema = answerSchema ?? (json ? userJsonSchema(input.response_format) : undefined);
  const answer = await context.llm
    .generate({
      purpose: "llm_generate",
      messages,
      json,
      // A schema the user gave goes to the server as one: llama.cpp enforces `json_schema`, not `json_object`.
      ...(schema ? { jsonSchema: schema } : {}),
      stream: true,
    })
    .catch((error: unknown) => {
      throw json ? asInvalidJson(error) : error;
    });
  if (!json) return { value: answer.text };
  if (answer.value !== undefined) return { value: answer.value };
  try {
    return { value: JSON.parse(answer.text) };
  } catch {
    throw new StepError(
      "llm_invalid_json",
      "llm_generate was asked for JSON but the model's answer is not valid JSON; simplify the requested format or ask for text",
      { text: answer.text.slice(0, 500) },
    );
  }
}

/**
 * A calling that fills several output vars: the model answers a JSON object with
 * exactly those keys (a `json_schema` format named `output_vars`), as the original
 * StackVM asked; the VM then maps the object by key.
 */
async function runForKeys(input: LlmGenerateInput, context: ToolContext): Promise<ToolResult> {
  const names = context.outputVars ?? [];
  const schema = z
    .object(Object.fromEntries(names.map((name) => [name, z.unknown()])))
    .required()
    .strict();
  const user = userPrompt(input);
  const messages: LlmMessage[] = [
    { role: "system", content: systemPrompt(context.goal, context.responseFormat, true, user) },
    {
      role: "user",
      content: `${user}\n\nAnswer a JSON object with exactly the keys ${names.map((n) => `"${n}"`).join(", ")}, each holding its part of the answer.`,
    },
  ];
  const value = await context.llm.json({
    purpose: "llm_generate",
    schemaName: "output_vars",
    schema,
    messages,
    stream: true,
  });
  return { value };
}

/**
 * The task's answer schema (`response_format.answer_schema`), when this step
 * writes `final_answer` alone and asks for no format of its own: the model is
 * asked for JSON of that schema, which the end of the step checks.
 */
function finalAnswerSchema(
  input: LlmGenerateInput,
  context: ToolContext,
): { name: string; schema: Record<string, unknown> } | undefined {
  if (input.response_format !== undefined) return undefined;
  if (context.outputVars?.length !== 1 || context.outputVars[0] !== "final_answer")
    return undefined;
  const schema = context.responseFormat[ANSWER_SCHEMA_KEY];
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return undefined;
  return { name: "final_answer", schema: schema as Record<string, unknown> };
}

/** A JSON answer that never parsed is `llm_invalid_json`, the code the docs name for it. */
function asInvalidJson(error: unknown): unknown {
  if (!(error instanceof StepError) || error.code !== "llm_invalid_output") return error;
  return new StepError(
    "llm_invalid_json",
    `llm_generate was asked for JSON but ${error.message.replace(/^the model/, "the model")}; simplify the requested format or ask for text`,
    error.details,
    error,
  );
}

/** Passages from `vector_search` or `retrieve_knowledge_graph` in the material: chunks with their ids. */
const RETRIEVED_CHUNK = /"chunk_id"\s*:\s*"/;

function systemPrompt(
  goal: string | null,
  format: ResponseFormat,
  json: boolean,
  user: string,
): string {
  const lines = [
    "You are one step of a larger task. Do exactly what the user message asks, using the context it gives.",
  ];
  if (goal) lines.push(`The task's goal, for background: ${goal}`);
  const entries = Object.entries(format).filter(([, value]) => value !== undefined && value !== "");
  if (entries.length) {
    const described = entries.map(
      ([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`,
    );
    lines.push(`The task's response format: ${described.join("; ")}.`);
  }
  const language = taskLanguage(format);
  if (language) {
    lines.push(
      json
        ? `Write every natural-language text inside the JSON in ${language}; keep keys as requested.`
        : `Write your answer in ${language}.`,
    );
  }
  if (RETRIEVED_CHUNK.test(user)) {
    lines.push(
      "The material holds retrieved passages, each with a chunk_id: after a statement taken from one, cite it as [chunk_id].",
    );
  }
  lines.push(
    json
      ? "Answer with JSON only: no prose, no code fence."
      : "Answer with the requested text only, without preamble or closing remarks.",
  );
  return lines.join("\n");
}

function userPrompt(input: LlmGenerateInput): string {
  const parts: string[] = [];
  if (input.context !== undefined) {
    const context =
      typeof input.context === "string" ? input.context : JSON.stringify(input.context, null, 2);
    parts.push(`Context:\n${context}`);
  }
  parts.push(input.context === undefined ? input.prompt : `Request:\n${input.prompt}`);
  if (input.response_format !== undefined) {
    const format =
      typeof input.response_format === "string"
        ? input.response_format
        : JSON.stringify(input.response_format);
    parts.push(`Format of the answer: ${format}`);
  }
  return parts.join("\n\n");
}

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
