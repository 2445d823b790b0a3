/**
 * How many tokens a prompt takes, before it is sent: the session measures each
 * request against the server's context with this, so that a prompt that cannot
 * fit fails at once with its size instead of as the server's 400 (or, on Ollama,
 * as a prompt silently cut). No tokenizer is at hand for an arbitrary server's
 * model, so the estimate errs high: a token per 3 UTF-8 bytes (English prose and
 * JSON run 3.5 to 4.5 characters a token on the common vocabularies; a CJK
 * character, 3 bytes, is about one token), plus the chat template's few tokens
 * per message.
 */
import type { LlmMessage } from "../ports/llm";

/** Bytes per token the estimate assumes (low, so the count is high). */
const BYTES_PER_TOKEN = 3;
/** A chat template's role markers and separators, per message. */
const TOKENS_PER_MESSAGE = 4;
/** The assistant turn's opening that the template appends. */
const TOKENS_PER_PROMPT = 3;

const encoder = new TextEncoder();

/**
 * A conservative (high) estimate of a chat prompt's tokens.
 *
 * @example
 * estimatePromptTokens([{ role: "user", content: "Reply with ok" }]) // 12
 */
export function estimatePromptTokens(messages: readonly LlmMessage[]): number {
  let tokens = TOKENS_PER_PROMPT;
  for (const message of messages) {
    tokens +=
      TOKENS_PER_MESSAGE + Math.ceil(encoder.encode(message.content).length / BYTES_PER_TOKEN);
  }
  return tokens;
}

/** The characters of a chat prompt, for messages that name its size. */
export function promptChars(messages: readonly LlmMessage[]): number {
  return messages.reduce((sum, message) => sum + message.content.length, 0);
}
