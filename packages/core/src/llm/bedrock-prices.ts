/**
 * Built-in prices of common Amazon Bedrock models (USD per million tokens,
 * on-demand, us-east-1, as AWS published them in 2025), by foundation-model id.
 * A cross-region inference profile (`us.`, `eu.`, `apac.`, `global.` ... before
 * the id) is priced as its model. Configuration (`LLM_PRICES`) overrides them;
 * a model in no table costs 0, as on the OpenAI side.
 */
import type { LlmPrices } from "./config";

export const BEDROCK_LLM_PRICES: Readonly<LlmPrices> = {
  // Anthropic Claude
  "anthropic.claude-opus-4-5-20251101-v1:0": { input: 5, output: 25 },
  "anthropic.claude-opus-4-1-20250805-v1:0": { input: 15, output: 75 },
  "anthropic.claude-opus-4-20250514-v1:0": { input: 15, output: 75 },
  "anthropic.claude-sonnet-4-5-20250929-v1:0": { input: 3, output: 15 },
  "anthropic.claude-sonnet-4-20250514-v1:0": { input: 3, output: 15 },
  "anthropic.claude-haiku-4-5-20251001-v1:0": { input: 1, output: 5 },
  "anthropic.claude-3-7-sonnet-20250219-v1:0": { input: 3, output: 15 },
  "anthropic.claude-3-5-sonnet-20241022-v2:0": { input: 3, output: 15 },
  "anthropic.claude-3-5-sonnet-20240620-v1:0": { input: 3, output: 15 },
  "anthropic.claude-3-5-haiku-20241022-v1:0": { input: 0.8, output: 4 },
  "anthropic.claude-3-opus-20240229-v1:0": { input: 15, output: 75 },
  "anthropic.claude-3-sonnet-20240229-v1:0": { input: 3, output: 15 },
  "anthropic.claude-3-haiku-20240307-v1:0": { input: 0.25, output: 1.25 },
  // Amazon Nova
  "amazon.nova-premier-v1:0": { input: 2.5, output: 12.5 },
  "amazon.nova-pro-v1:0": { input: 0.8, output: 3.2 },
  "amazon.nova-lite-v1:0": { input: 0.06, output: 0.24 },
  "amazon.nova-micro-v1:0": { input: 0.035, output: 0.14 },
  // Meta Llama
  "meta.llama4-maverick-17b-instruct-v1:0": { input: 0.24, output: 0.97 },
  "meta.llama4-scout-17b-instruct-v1:0": { input: 0.17, output: 0.66 },
  "meta.llama3-3-70b-instruct-v1:0": { input: 0.72, output: 0.72 },
  "meta.llama3-2-90b-instruct-v1:0": { input: 0.72, output: 0.72 },
  "meta.llama3-2-11b-instruct-v1:0": { input: 0.16, output: 0.16 },
  "meta.llama3-2-3b-instruct-v1:0": { input: 0.15, output: 0.15 },
  "meta.llama3-2-1b-instruct-v1:0": { input: 0.1, output: 0.1 },
  "meta.llama3-1-405b-instruct-v1:0": { input: 2.4, output: 2.4 },
  "meta.llama3-1-70b-instruct-v1:0": { input: 0.72, output: 0.72 },
  "meta.llama3-1-8b-instruct-v1:0": { input: 0.22, output: 0.22 },
  // Embeddings (knowledge): input tokens only.
  "amazon.titan-embed-text-v2:0": { input: 0.02, output: 0 },
};

/** The region-group prefix of a cross-region inference profile id: `us.`, `eu.`, `apac.`, `global.` ... */
const INFERENCE_PROFILE_PREFIX = /^(us|eu|apac|global|us-gov|jp|au|ca)\./;

/**
 * The foundation-model id behind a model id: the id itself, or the model of a
 * cross-region inference profile.
 *
 * @example
 * bedrockModelOf("us.anthropic.claude-3-5-haiku-20241022-v1:0") // "anthropic.claude-3-5-haiku-20241022-v1:0"
 */
export function bedrockModelOf(model: string): string {
  return model.replace(INFERENCE_PROFILE_PREFIX, "");
}
