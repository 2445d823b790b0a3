/** What an LLM call cost, from the configured and the built-in price tables. */
import { BEDROCK_LLM_PRICES, bedrockModelOf } from "./bedrock-prices";
import { DEFAULT_LLM_PRICES, type LlmPrice, type LlmPrices } from "./config";

/** A dated snapshot name (`gpt-4o-2024-08-06`) is priced as its base name (`gpt-4o`). */
const DATE_SUFFIX = /-\d{4}-\d{2}-\d{2}$/;

/**
 * The price of a model: configured prices first, then the built-in ones, each by
 * exact name and then without a date suffix; a Bedrock inference profile
 * (`us.anthropic...`) as its model. Undefined when the model is in no table.
 */
export function priceOf(model: string, prices: LlmPrices): LlmPrice | undefined {
  const base = model.replace(DATE_SUFFIX, "");
  return (
    prices[model] ??
    prices[base] ??
    DEFAULT_LLM_PRICES[model] ??
    DEFAULT_LLM_PRICES[base] ??
    BEDROCK_LLM_PRICES[bedrockModelOf(model)]
  );
}

/**
 * The cost in USD of a call; 0 for a model with no known price.
 *
 * @example
 * costUsd("gpt-4o-mini", 1_000_000, 500_000, {}) // 0.15 + 0.30 = 0.45
 */
export function costUsd(
  model: string,
  inputTokens: number,
  outputTokens: number,
  prices: LlmPrices,
): number {
  const price = priceOf(model, prices);
  if (price === undefined) return 0;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
