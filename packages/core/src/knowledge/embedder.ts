/**
 * Embeddings over the embeddings port, as core wants them: batched, retried as
 * LLM calls are, and recorded as an `LlmCall` (purpose `embedding`, tokens, cost)
 * for the ledger of the ingest or of the step that searched.
 */

import { StepError } from "../errors";
import type { LlmConfig } from "../llm/config";
import { costUsd } from "../llm/cost";
import { DEFAULT_RETRY_DELAYS, withRetries } from "../llm/retry";
import type { LlmCall } from "../model";
import type { EmbeddingPort } from "../ports/embeddings";

export interface EmbedderOptions {
  port: EmbeddingPort;
  /** `EMBEDDING_MODEL`. */
  model: string;
  /** Timeout, attempts and prices, as for LLM calls. */
  llm: Pick<LlmConfig, "timeoutMs" | "maxAttempts" | "prices">;
  /**
   * The server is on loopback or a private network (a local model): its calls
   * cost 0 unless `LLM_PRICES` names the model, whatever the model is called.
   */
  local?: boolean;
  /** Texts per request (OpenAI takes up to 2,048). */
  batchSize?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** The default `EMBEDDING_MODEL`. */
export const DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small";

/** Characters of one text sent to the model (about 8,000 tokens, the usual context). */
const MAX_INPUT_CHARS = 24_000;

export interface Embedder {
  readonly model: string;
  /** One vector per text, and one call record per request made. */
  embed(texts: string[]): Promise<{ vectors: number[][]; calls: LlmCall[] }>;
}

/**
 * @example
 * const embedder = createEmbedder({ port, model: "text-embedding-3-small", llm: config });
 * const { vectors, calls } = await embedder.embed(["first chunk", "second chunk"]);
 */
export function createEmbedder(options: EmbedderOptions): Embedder {
  const batchSize = options.batchSize ?? 64;
  const now = options.now ?? Date.now;
  const policy = {
    ...DEFAULT_RETRY_DELAYS,
    maxAttempts: options.llm.maxAttempts,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    random: Math.random,
  };
  return {
    model: options.model,
    async embed(texts) {
      const vectors: number[][] = [];
      const calls: LlmCall[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const input = texts
          .slice(start, start + batchSize)
          .map((t) => t.slice(0, MAX_INPUT_CHARS) || " ");
        const started = now();
        const { value, attempts } = await withRetries(
          () =>
            options.port.embed({ model: options.model, input, timeoutMs: options.llm.timeoutMs }),
          policy,
        );
        if (value.vectors.length !== input.length) {
          throw new StepError(
            "embedding_mismatch",
            `the embedding server returned ${value.vectors.length} vectors for ${input.length} texts (model ${options.model})`,
          );
        }
        vectors.push(...value.vectors);
        calls.push({
          purpose: "embedding",
          model: value.model || options.model,
          input_tokens: value.inputTokens,
          output_tokens: 0,
          cost_usd: priced(options, value.model)
            ? costUsd(options.model, value.inputTokens, 0, options.llm.prices)
            : 0,
          latency_ms: now() - started,
          attempts,
        });
      }
      return { vectors, calls };
    },
  };
}

/**
 * Whether an embedding call is priced by the configured model's list price: a
 * model the operator priced (`LLM_PRICES`) always is; otherwise only a server
 * that is not local and answered as that model (or a dated snapshot of it). A
 * llama.cpp or Ollama server on loopback that answers to `text-embedding-3-small`
 * (the default name) is not OpenAI, and costs nothing.
 */
function priced(options: EmbedderOptions, answered: string): boolean {
  if (options.llm.prices[options.model] !== undefined) return true;
  if (options.local) return false;
  return !answered || answered === options.model || answered.startsWith(`${options.model}-`);
}
