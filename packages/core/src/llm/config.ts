/**
 * How the LLM layer is configured: which model serves which role, how long a call
 * may take, how often to retry and repair, and what tokens cost. The base URL and
 * the API key are not here: they belong to the adapter (`OpenAiLlm`).
 */
import * as z from "zod";
import { ValidationError } from "../errors";

/** A model's price in USD per million tokens, input and output. */
export const LlmPrice = z
  .object({
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
  })
  .strict();
export type LlmPrice = z.infer<typeof LlmPrice>;

/** Prices per model name, USD per million input/output tokens. */
export const LlmPrices = z.record(z.string().min(1), LlmPrice);
export type LlmPrices = z.infer<typeof LlmPrices>;

/**
 * The default `LLM_TIMEOUT_MS`: 5 minutes, what a 7-8B model on a laptop's CPU
 * takes for a plan of a few thousand tokens of prompt and a thousand of answer.
 */
export const DEFAULT_LLM_TIMEOUT_MS = 300_000;

export const LlmConfig = z.object({
  /** `LLM_MODEL`, `REASON_LLM_MODEL` (plans, plan updates), `EVAL_LLM_MODEL`. */
  models: z.object({
    default: z.string().min(1),
    reason: z.string().min(1),
    eval: z.string().min(1),
  }),
  /**
   * `LLM_TIMEOUT_MS`: how long one attempt may take to finish its answer, per
   * attempt, not per call (a call may take `maxAttempts` times this plus the
   * waits). The default lets a model on a CPU write a plan; a server that gives
   * no answer at all is not waited for this long (`llm_unreachable`).
   */
  timeoutMs: z.number().int().positive().default(DEFAULT_LLM_TIMEOUT_MS),
  /** Attempts per call, the first included, before a transient failure is rethrown. */
  maxAttempts: z.number().int().min(1).max(10).default(4),
  /** How many times an unparseable or invalid answer goes back to the model. */
  repairRounds: z.number().int().min(0).max(5).default(2),
  /**
   * Prices that override or extend `DEFAULT_LLM_PRICES`. A model in neither table
   * costs 0: its calls are recorded with their tokens but `cost_usd: 0`, and a
   * `max_cost_usd` budget then never runs out; add the model here to count it.
   */
  prices: LlmPrices.default({}),
});
/** The validated configuration; build it with `LlmConfig.parse({...})` or `loadLlmConfig`. */
export type LlmConfig = z.infer<typeof LlmConfig>;

/**
 * Built-in list prices (USD per million tokens, standard tier, as published by
 * OpenAI in 2025). Configuration (`LLM_PRICES`) overrides them; dated snapshots
 * such as `gpt-4o-2024-08-06` are priced as their base name.
 */
export const DEFAULT_LLM_PRICES: Readonly<LlmPrices> = {
  "gpt-5": { input: 1.25, output: 10 },
  "gpt-5-mini": { input: 0.25, output: 2 },
  "gpt-5-nano": { input: 0.05, output: 0.4 },
  "gpt-4.1": { input: 2, output: 8 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  "o3-mini": { input: 1.1, output: 4.4 },
  "o4-mini": { input: 1.1, output: 4.4 },
  o1: { input: 15, output: 60 },
  "gpt-4-turbo": { input: 10, output: 30 },
  "gpt-3.5-turbo": { input: 0.5, output: 1.5 },
  // Embedding models (knowledge): input tokens only.
  "text-embedding-3-small": { input: 0.02, output: 0 },
  "text-embedding-3-large": { input: 0.13, output: 0 },
  "text-embedding-ada-002": { input: 0.1, output: 0 },
};

/**
 * Reads the LLM settings from an environment. Unset and empty values mean "not
 * set". A missing `LLM_MODEL` or a bad value throws a `ValidationError` naming
 * the setting and saying how to fix it.
 *
 * @example
 * loadLlmConfig({ LLM_MODEL: "gpt-4o-mini", REASON_LLM_MODEL: "o4-mini" })
 * // models: { default: "gpt-4o-mini", reason: "o4-mini", eval: "o4-mini" }
 */
export function loadLlmConfig(env: Record<string, string | undefined>): LlmConfig {
  const get = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const model = get("LLM_MODEL");
  if (model === undefined) {
    throw invalid(
      "LLM_MODEL is not set: set it to a model name of your OpenAI-compatible server, e.g. LLM_MODEL=gpt-4o-mini",
    );
  }
  const reason = get("REASON_LLM_MODEL") ?? model;
  return LlmConfig.parse({
    models: { default: model, reason, eval: get("EVAL_LLM_MODEL") ?? reason },
    timeoutMs: wholeNumber("LLM_TIMEOUT_MS", get("LLM_TIMEOUT_MS"), 1, "milliseconds"),
    maxAttempts: wholeNumber("LLM_MAX_ATTEMPTS", get("LLM_MAX_ATTEMPTS"), 1, "attempts", 10),
    repairRounds: wholeNumber("LLM_REPAIR_ROUNDS", get("LLM_REPAIR_ROUNDS"), 0, "rounds", 5),
    prices: prices(get("LLM_PRICES")),
  });
}

function wholeNumber(
  name: string,
  raw: string | undefined,
  min: number,
  unit: string,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`;
    throw invalid(`${name} must be a whole number of ${unit}, ${range}; got '${raw}'`);
  }
  return value;
}

function prices(raw: string | undefined): LlmPrices | undefined {
  if (raw === undefined) return undefined;
  const example = `e.g. LLM_PRICES='{"my-model": {"input": 0.5, "output": 1.5}}' (USD per million tokens)`;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw invalid(`LLM_PRICES is not JSON (${(error as Error).message}): ${example}`);
  }
  const parsed = LlmPrices.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw invalid(`LLM_PRICES is not a price table (${issues.join("; ")}): ${example}`);
  }
  return parsed.data;
}

function invalid(message: string): ValidationError {
  return new ValidationError("invalid_config", message);
}
