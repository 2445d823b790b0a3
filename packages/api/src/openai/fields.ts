/**
 * What the chat face does with the fields of OpenAI's request beyond the
 * messages: `response_format` shapes the final answer (a JSON Schema the plan's
 * answer must validate against, `response_format.answer_schema` of the task);
 * the fields a run cannot honour (`tools`, `n` above 1, audio, ...) are refused
 * with a 400 naming the field, so that a client never takes an answer for
 * what it did not ask; the sampling fields (`temperature`, `max_tokens`, ...)
 * are the plan's to decide and are ignored.
 */
import { StackVMError } from "@stackvm/core";
import type { ChatCompletionRequest } from "./schemas";

/** The task's response format for the request's `response_format`. */
export function answerFormat(request: ChatCompletionRequest): Record<string, unknown> | undefined {
  const format = request.response_format;
  if (!format || format.type === "text") return undefined;
  if (format.type === "json_object") return { answer_schema: { type: "object" } };
  const schema = format.json_schema.schema ?? {};
  return { answer_schema: schema };
}

/** A field of the request, and why a run cannot honour it with the value given. */
const UNSUPPORTED: Array<[field: string, refused: (value: unknown) => boolean, why: string]> = [
  [
    "tools",
    (v) => Array.isArray(v) && v.length > 0,
    "a plan calls its namespace's tools itself; client-side tools are not called back",
  ],
  [
    "tool_choice",
    (v) => v !== "none" && v !== "auto",
    "a plan calls its namespace's tools itself; only 'none' or 'auto' is accepted",
  ],
  [
    "functions",
    (v) => Array.isArray(v) && v.length > 0,
    "functions (the old tools) are not called back",
  ],
  ["function_call", (v) => v !== "none" && v !== "auto", "functions are not called back"],
  ["n", (v) => v !== 1, "a run has one final answer: leave n out or send 1"],
  ["logprobs", (v) => v === true, "a run's answer has no log probabilities"],
  ["top_logprobs", (v) => v !== 0, "a run's answer has no log probabilities"],
  ["audio", () => true, "a run answers text"],
  [
    "modalities",
    (v) => !(Array.isArray(v) && v.every((m) => m === "text")),
    'a run answers text: leave modalities out or send ["text"]',
  ],
  ["prediction", () => true, "a run has no predicted output"],
];

/** Refuses a request that asks for what a run cannot do, naming the field. */
export function refuseUnsupported(request: Record<string, unknown>): void {
  for (const [field, refused, why] of UNSUPPORTED) {
    const value = request[field];
    if (value === undefined || value === null || !refused(value)) continue;
    throw new StackVMError(
      "malformed",
      "unsupported_parameter",
      `${field} is not supported here: ${why}`,
      {
        details: { param: field },
      },
    );
  }
}
