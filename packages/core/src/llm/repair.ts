/**
 * The repair loop of a session: an answer that does not parse or validate goes
 * back to the model with its errors (and the start of the answer), at most
 * `repairRounds` times, each round a new call with its own budget check, record
 * and trace. An answer cut off at the output limit is not parsed (a fragment of
 * it may parse, and its errors mislead): the repair asks for a shorter one.
 */
import type { LlmPurpose } from "../model";
import type { LlmResponse } from "../ports/llm";
import { cutOff, invalidOutput, isCutOff, type Parsed } from "./answers";
import type { Caller, CallRequest, Made } from "./call";
import type { LlmConfig } from "./config";
import { outputLimit } from "./context-fit";
import { repairExcerpt } from "./excerpt";
import type { TraceAttempt } from "./trace";

/** What one call until a valid answer asks for, beyond its request. */
export interface RepairOptions<T> {
  /** Accepts the answer's text, or says what is wrong with it. */
  parse: (text: string) => Parsed<T>;
  /** What the answer should be, for the prompts and errors ("'plan' JSON"). */
  what: string;
  stream?: boolean;
  /** How to shorten an answer that was cut off. */
  cutOffHint?: string;
  /** Put first in the first call's trace (a schema the server refused, say). */
  notes?: TraceAttempt[];
}

/**
 * Calls until `parse` accepts the answer or the repair rounds run out; then
 * throws the step error that names the last answer's problems.
 *
 * @example
 * const { value } = await callUntilValid(caller, config, "plan", request, { parse: parseJson, what: "JSON value" });
 */
export async function callUntilValid<T>(
  caller: Pick<Caller, "call" | "traced">,
  config: Pick<LlmConfig, "repairRounds" | "outputTokens">,
  purpose: LlmPurpose,
  request: CallRequest,
  options: RepairOptions<T>,
): Promise<{ response: LlmResponse; value: T; reasoning?: string }> {
  const {
    parse,
    what,
    stream = false,
    cutOffHint = "write a shorter answer",
    notes = [],
  } = options;
  let messages = request.messages;
  for (let round = 0; ; round++) {
    let made: Made;
    try {
      made = await caller.call(purpose, { ...request, messages }, stream);
    } catch (error) {
      // A server that could not read its own cut answer (llama.cpp's 500) said as
      // much as a cut answer: the call is on record; the repair asks for less.
      if (!isErrorCode(error, "llm_output_cut_off") || round >= config.repairRounds) throw error;
      const at = request.maxOutputTokens ?? outputLimit(config, purpose);
      messages = [...messages, { role: "user", content: cutOffRepair(at, cutOffHint, what) }];
      continue;
    }
    if (round === 0) made.attempts.unshift(...notes);
    const { response } = made;
    // A cut answer is not parsed: a fragment of it may parse, and its errors mislead.
    const parsed = isCutOff(response)
      ? cutOff<T>(response, made.request.maxOutputTokens)
      : parse(response.text);
    await caller.traced(made, made.request, round, parsed);
    if (parsed.ok) {
      // The server's own reasoning field, else the `<think>` the answer carried.
      const reasoning = response.reasoning ?? parsed.thinking;
      return { response, value: parsed.value, ...(reasoning === undefined ? {} : { reasoning }) };
    }
    if (round >= config.repairRounds)
      throw invalidOutput(purpose, what, round + 1, parsed, response);
    messages = [
      ...messages,
      // The problems and the start of the answer: the whole would grow every round.
      { role: "assistant", content: repairExcerpt(response.text) },
      {
        role: "user",
        content:
          parsed.cutOff === undefined
            ? repairPrompt(what, parsed.errors)
            : cutOffRepair(parsed.cutOff, cutOffHint, what),
      },
    ];
  }
}

/** The repair prompt after an answer cut off at `at` tokens. */
function cutOffRepair(at: number, hint: string, what: string): string {
  return `Your answer was cut off at ${at} tokens: ${hint}. Answer the whole ${what} again, complete.`;
}

/** True when `error` carries the stable `code` (a `StepError` or one like it). */
function isErrorCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

function repairPrompt(what: string, errors: string[]): string {
  return [
    `Your answer is not valid ${what}:`,
    ...errors.map((e) => `- ${e}`),
    `Answer again with only the corrected ${what}, no other text.`,
  ].join("\n");
}
