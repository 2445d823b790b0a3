/**
 * Every call's output limit, and its prompt measured against the server's context
 * before it is sent. A local server's context is small (4,096 tokens is llama.cpp's
 * and Ollama's common default): a prompt that cannot fit fails at once, naming its
 * size, the context and the setting to change, rather than as the server's 400
 * three requests later or, on Ollama, as a prompt silently cut at the front.
 */
import { StepError } from "../errors";
import type { LlmPurpose } from "../model";
import type { LlmMessage, LlmPort, LlmRequest } from "../ports/llm";
import { DEFAULT_OUTPUT_TOKENS, type LlmConfig, type OutputPurpose } from "./config";
import { estimatePromptTokens, promptChars } from "./tokens";

/** Which output limit a call's purpose takes. */
const OUTPUT_PURPOSE: Readonly<Record<LlmPurpose, OutputPurpose | undefined>> = {
  plan: "plan",
  plan_update: "plan_update",
  jmp_condition: "condition",
  llm_generate: "generate",
  // A judge's verdict with its reasons: as long as a generated text may be.
  evaluation: "generate",
  code: "code",
  knowledge_graph: "graph",
  embedding: undefined,
  web_search: undefined,
};

/** The output purpose (`LLM_MAX_OUTPUT_TOKENS`'s key) of a call's purpose. */
export function outputPurposeOf(purpose: LlmPurpose): OutputPurpose {
  return OUTPUT_PURPOSE[purpose] ?? "generate";
}

/** The purpose's output limit; a config built by hand (not parsed) has the defaults. */
export function outputLimit(config: Pick<LlmConfig, "outputTokens">, purpose: LlmPurpose): number {
  const key = outputPurposeOf(purpose);
  return (
    (config.outputTokens as Partial<LlmConfig["outputTokens"]> | undefined)?.[key] ??
    DEFAULT_OUTPUT_TOKENS[key]
  );
}

/**
 * Fewest tokens worth asking for: a prompt that leaves less room than this (or
 * than the call's own limit, if smaller) fails instead of being sent for an
 * answer that must be cut off.
 */
export const MIN_ANSWER_TOKENS = 256;

/** The server's context for a model, and who said so. */
export interface KnownContext {
  tokens: number;
  /** "the server" or "LLM_CONTEXT_TOKENS", for the message. */
  source: string;
}

/**
 * The context of each model as the server reports it, else as `LLM_CONTEXT_TOKENS`
 * sets it: asked of the server once per model and lookup (one per session: a step
 * makes few calls). A server that cannot say counts as not saying. `fresh` asks
 * the server again, past what it or the port remembered: a server restarted with
 * another context is seen by the next call.
 *
 * @example
 * const contextOf = contextLookup(port, config);
 * fitOutput({ purpose, messages, limit, context: await contextOf(model) });
 * await contextOf(model, { fresh: true }); // after a refusal for the context
 */
export function contextLookup(
  port: Pick<LlmPort, "contextTokens">,
  config: Pick<LlmConfig, "contextTokens">,
): (
  model: string,
  options?: { role?: LlmRequest["role"]; fresh?: boolean },
) => Promise<KnownContext | undefined> {
  const contexts = new Map<string, Promise<KnownContext | undefined>>();
  return (model, options = {}) => {
    // The same model name on two roles' servers may have two contexts.
    const key = `${options.role ?? "default"} ${model}`;
    let known = options.fresh ? undefined : contexts.get(key);
    if (known === undefined) {
      const asked = port.contextTokens
        ? port.contextTokens(model, options)
        : Promise.resolve(undefined);
      known = asked
        .catch(() => undefined)
        .then((tokens) => {
          if (tokens !== undefined) return { tokens, source: "the server" };
          if (config.contextTokens !== undefined) {
            return { tokens: config.contextTokens, source: "LLM_CONTEXT_TOKENS" };
          }
          return undefined;
        });
      contexts.set(key, known);
    }
    return known;
  };
}

/**
 * The output limit to send: the purpose's limit (or the caller's), lowered to the
 * room the prompt leaves in a known context. Throws `llm_context_exceeded` when
 * that room is less than {@link MIN_ANSWER_TOKENS}.
 *
 * @example
 * fitOutput({ purpose: "plan", messages, limit: 2048, context: { tokens: 4096, source: "the server" } })
 * // 2048, or less when the prompt is long; throws when it cannot fit
 */
export function fitOutput(input: {
  purpose: LlmPurpose;
  messages: readonly LlmMessage[];
  limit: number;
  context: KnownContext | undefined;
  /** The prompt's tokens as the server counted them; absent: the (high) estimate. */
  counted?: number | undefined;
}): number {
  const { purpose, messages, limit, context, counted } = input;
  if (context === undefined) return limit;
  const prompt = counted ?? estimatePromptTokens(messages);
  const room = context.tokens - prompt;
  const needed = Math.min(limit, MIN_ANSWER_TOKENS);
  if (room >= needed) return Math.min(limit, room);
  const n = (value: number) => value.toLocaleString("en-US");
  const setting = outputPurposeOf(purpose);
  throw new StepError(
    "llm_context_exceeded",
    `the ${purpose} prompt is ${counted === undefined ? "about " : ""}${n(prompt)} tokens${counted === undefined ? "" : " as the server counts them"} (${n(promptChars(messages))} characters), ` +
      `which leaves ${room > 0 ? `only ${n(room)}` : "no"} tokens for an answer (at least ${n(needed)} needed; ` +
      `the ${setting} output limit is ${n(limit)}) in the LLM server's context of ${n(context.tokens)} tokens ` +
      `(as ${context.source} says): give the server a larger context (llama-server -c, Ollama OLLAMA_CONTEXT_LENGTH or num_ctx) ` +
      `and, if the server does not report it, set LLM_CONTEXT_TOKENS to it; or shorten the goal and inputs`,
    {
      purpose,
      ...(counted === undefined ? { prompt_tokens_estimate: prompt } : { prompt_tokens: prompt }),
      prompt_chars: promptChars(messages),
      context_tokens: context.tokens,
      context_source: context.source,
      output_limit: limit,
    },
  );
}
