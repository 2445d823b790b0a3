/**
 * What the session makes of an answer: JSON parsed and checked against its
 * schema, the reasoning model's thinking set apart, an answer cut off at the
 * output limit recognised as such (never parsed: a fragment of it may parse, and
 * its errors mislead), and the errors a step fails with when no answer would do.
 */
import type * as z from "zod";
import { StepError } from "../errors";
import type { LlmPurpose } from "../model";
import type { LlmResponse } from "../ports/llm";
import { outputPurposeOf } from "./context-fit";
import { extractJson } from "./extract-json";

/** The repair loop's verdict on one answer; `cutOff`: it stopped at the output limit. */
export type Parsed<T> =
  | { ok: true; value: T; thinking?: string }
  | { ok: false; errors: string[]; cutOff?: number };

/** How much of a rejected answer goes into the error's details. */
const ANSWER_EXCERPT_CHARS = 2_000;
/** How many validation issues are sent back to the model and put in the error. */
const MAX_ISSUES = 20;

/** Any JSON value in the answer (`generate` with `json`). */
export function parseJson(text: string): Parsed<unknown> {
  const extracted = extractJson(text);
  return extracted.ok ? extracted : { ok: false, errors: [extracted.error] };
}

/** A permanent refusal of the request's JSON Schema (llama.cpp's grammar conversion, OpenAI's schema checks). */
export function refusesSchema(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === "llm_bad_request" &&
    typeof message === "string" &&
    /schema|grammar|response_format/i.test(message)
  );
}

/** The answer's JSON checked against the call's schema; the issues, a bounded number, when it fails. */
export function validate<T>(text: string, schema: z.ZodType<T>): Parsed<T> {
  const extracted = extractJson(text);
  if (!extracted.ok) return { ok: false, errors: [extracted.error] };
  const result = schema.safeParse(extracted.value);
  if (result.success) {
    return extracted.thinking === undefined
      ? { ok: true, value: result.data }
      : { ok: true, value: result.data, thinking: extracted.thinking };
  }
  const errors = result.error.issues
    .slice(0, MAX_ISSUES)
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "(top)"}: ${issue.message}`);
  return { ok: false, errors };
}

/** The answer stopped at the output limit (`finish_reason: "length"`). */
export function isCutOff(response: LlmResponse): boolean {
  // OpenAI-compatible servers say `length`; Bedrock's Converse says `max_tokens`.
  return response.finishReason === "length" || response.finishReason === "max_tokens";
}

/** The verdict on a cut answer: how many tokens it stopped at, for the repair prompt. */
export function cutOff<T>(response: LlmResponse, limit: number | undefined): Parsed<T> {
  const at = response.outputTokens > 0 ? response.outputTokens : (limit ?? 0);
  return {
    ok: false,
    errors: [`the answer was cut off at ${at} tokens (the output limit) before it was complete`],
    cutOff: at,
  };
}

/** `llm_output_cut_off`: the answer (or every answer) stopped at the output limit. */
export function cutOffError(
  purpose: LlmPurpose,
  response: LlmResponse,
  limit: number | undefined,
  answers: number,
): StepError {
  const at = response.outputTokens > 0 ? response.outputTokens : (limit ?? 0);
  const key = outputPurposeOf(purpose);
  return new StepError(
    "llm_output_cut_off",
    `the model's ${purpose} answer was cut off at ${at} tokens, the output limit${answers > 1 ? `, in each of ${answers} answers` : ""}: ` +
      `ask for less, or raise the limit (LLM_MAX_OUTPUT_TOKENS='${key}=${Math.max(at * 2, 1024)}') if the server's context has room`,
    {
      purpose,
      output_tokens: at,
      output_limit: limit,
      answer: response.text.slice(0, ANSWER_EXCERPT_CHARS),
    },
  );
}

/** The error when the repair rounds are spent: cut off, or `llm_invalid_output`. */
export function invalidOutput(
  purpose: LlmPurpose,
  what: string,
  answers: number,
  parsed: { errors: string[]; cutOff?: number },
  response: LlmResponse,
): StepError {
  if (parsed.cutOff !== undefined) return cutOffError(purpose, response, parsed.cutOff, answers);
  return new StepError(
    "llm_invalid_output",
    `the model gave no valid ${what} in ${answers} answer(s): ${parsed.errors.join("; ")}`,
    { purpose, errors: parsed.errors, answer: response.text.slice(0, ANSWER_EXCERPT_CHARS) },
  );
}
