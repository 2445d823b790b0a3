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
    input: z.number().check(z.nonnegative()),
    output: z.number().check(z.nonnegative()),
  })
  .strict();
export type LlmPrice = z.infer<typeof LlmPrice>;

/** Prices per model name, USD per million input/output tokens. */
export const LlmPrices = z.record(z.string().min(1), LlmPrice);
export type LlmPrices = z.infer<typeof LlmPrices>;

/**
 * The kinds of call that have their own output limit: the planner's plan and plan
 * update, a `jmp` condition (and an evaluation's verdict), `llm_generate`, the code
 * that `code_task` writes, a chunk's knowledge graph at ingest, and `doctor`'s check.
 */
export const OUTPUT_PURPOSES = [
  "plan",
  "plan_update",
  "condition",
  "generate",
  "code",
  "graph",
  "doctor",
] as const;
export type OutputPurpose = (typeof OUTPUT_PURPOSES)[number];

/**
 * Output limits (tokens). Each is lowered to the room its prompt leaves in a known
 * context: the default namespace's first plan prompt is about 3,100 tokens by the
 * session's high estimate (2,250 by a real tokenizer), which leaves 969 in the
 * 4,096 of llama.cpp's and Ollama's default; a plan update fits there only when
 * llama.cpp counts it (docs/local-models.md, `scripts/prompt-sizes.ts`); in 8,192
 * each is sent.
 * A hosted model with a large context can take more; a reasoning
 * model counts its hidden thinking against `max_completion_tokens` and needs more
 * (`LLM_MAX_OUTPUT_TOKENS='plan=16000,plan_update=16000'`).
 */
export const DEFAULT_OUTPUT_TOKENS: Readonly<Record<OutputPurpose, number>> = {
  plan: 2_048,
  plan_update: 2_048,
  condition: 512,
  generate: 2_048,
  code: 2_048,
  graph: 1_024,
  // "Reply with ok": a server that ignored the limit generated 14,525 tokens here.
  doctor: 16,
};

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
   * The temperature each role's calls are sent with when the caller sets none
   * (`LLM_TEMPERATURE`, `REASON_LLM_TEMPERATURE`, `EVAL_LLM_TEMPERATURE`; 0 to 2;
   * reason follows default and eval follows reason). Absent: the server's own.
   */
  temperatures: z
    .object({
      default: z.number().optional(),
      reason: z.number().optional(),
      eval: z.number().optional(),
    })
    .default({}),
  /**
   * `LLM_TIMEOUT_MS`: how long one attempt may take to finish its answer, per
   * attempt, not per call (a call may take `maxAttempts` times this plus the
   * waits). The default lets a model on a CPU write a plan; a server that gives
   * no answer at all is not waited for this long (`llm_unreachable`).
   */
  timeoutMs: z.number().check(z.int(), z.positive()).default(DEFAULT_LLM_TIMEOUT_MS),
  /** Attempts per call, the first included, before a transient failure is rethrown. */
  maxAttempts: z.number().check(z.int(), z.gte(1), z.lte(10)).default(4),
  /** How many times an unparseable or invalid answer goes back to the model. */
  repairRounds: z.number().check(z.int(), z.gte(0), z.lte(5)).default(2),
  /**
   * Prices that override or extend `DEFAULT_LLM_PRICES`. A model in neither table
   * costs 0: its calls are recorded with their tokens but `cost_usd: 0`, and a
   * `max_cost_usd` budget then never runs out; add the model here to count it.
   */
  prices: LlmPrices.default({}),
  /**
   * The most tokens each kind of call may answer (`max_tokens`), so that no answer
   * runs on until the server's context is full. `LLM_MAX_OUTPUT_TOKENS` overrides
   * some or all of `DEFAULT_OUTPUT_TOKENS`.
   */
  outputTokens: z
    .record(z.enum(OUTPUT_PURPOSES), z.number().check(z.int(), z.positive()))
    .default({ ...DEFAULT_OUTPUT_TOKENS }),
  /**
   * `LLM_CONTEXT_TOKENS`: the server's context in tokens when the server does not
   * say (llama.cpp's `/props` and Ollama's `/api/ps` do). Unknown: prompts are not
   * measured before they are sent.
   */
  contextTokens: z.number().check(z.int(), z.positive()).optional(),
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
  const temperature = temperatureOf("LLM_TEMPERATURE", get("LLM_TEMPERATURE"));
  const reasonTemperature =
    temperatureOf("REASON_LLM_TEMPERATURE", get("REASON_LLM_TEMPERATURE")) ?? temperature;
  const evalTemperature =
    temperatureOf("EVAL_LLM_TEMPERATURE", get("EVAL_LLM_TEMPERATURE")) ?? reasonTemperature;
  // Parsed once per process: zod's compiled fast path would cost more to build than it saves.
  return LlmConfig.parse(
    {
      models: { default: model, reason, eval: get("EVAL_LLM_MODEL") ?? reason },
      temperatures: {
        ...(temperature === undefined ? {} : { default: temperature }),
        ...(reasonTemperature === undefined ? {} : { reason: reasonTemperature }),
        ...(evalTemperature === undefined ? {} : { eval: evalTemperature }),
      },
      timeoutMs: wholeNumber("LLM_TIMEOUT_MS", get("LLM_TIMEOUT_MS"), 1, "milliseconds"),
      maxAttempts: wholeNumber("LLM_MAX_ATTEMPTS", get("LLM_MAX_ATTEMPTS"), 1, "attempts", 10),
      repairRounds: wholeNumber("LLM_REPAIR_ROUNDS", get("LLM_REPAIR_ROUNDS"), 0, "rounds", 5),
      prices: prices(get("LLM_PRICES")),
      outputTokens: outputTokens(get("LLM_MAX_OUTPUT_TOKENS")),
      contextTokens: wholeNumber("LLM_CONTEXT_TOKENS", get("LLM_CONTEXT_TOKENS"), 256, "tokens"),
    },
    { jitless: true },
  );
}

/** A temperature setting: a number from 0 to 2, as OpenAI-compatible servers take it. */
function temperatureOf(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 2) {
    throw invalid(`${name} must be a number from 0 to 2, e.g. ${name}=0.2; got '${raw}'`);
  }
  return value;
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

/**
 * `LLM_MAX_OUTPUT_TOKENS` as a JSON object (`{"plan": 4096}`) or a list
 * (`plan=4096,generate=1024`); the purposes it does not name keep their defaults.
 */
function outputTokens(raw: string | undefined): Record<OutputPurpose, number> | undefined {
  if (raw === undefined) return undefined;
  const example = `e.g. LLM_MAX_OUTPUT_TOKENS='plan=4096,generate=1024' or '{"plan": 4096}'; purposes: ${OUTPUT_PURPOSES.join(", ")}`;
  let entries: Array<[string, unknown]>;
  if (raw.startsWith("{")) {
    try {
      entries = Object.entries(JSON.parse(raw) as Record<string, unknown>);
    } catch (error) {
      throw invalid(`LLM_MAX_OUTPUT_TOKENS is not JSON (${(error as Error).message}): ${example}`);
    }
  } else {
    entries = raw.split(",").map((pair) => {
      const [key = "", value = ""] = pair.split("=").map((part) => part.trim());
      return [key, value === "" ? Number.NaN : Number(value)];
    });
  }
  const limits: Record<OutputPurpose, number> = { ...DEFAULT_OUTPUT_TOKENS };
  for (const [key, value] of entries) {
    if (!(OUTPUT_PURPOSES as readonly string[]).includes(key)) {
      throw invalid(`LLM_MAX_OUTPUT_TOKENS names an unknown purpose '${key}': ${example}`);
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      throw invalid(
        `LLM_MAX_OUTPUT_TOKENS: ${key} must be a whole number of tokens, at least 1; got '${String(value)}': ${example}`,
      );
    }
    limits[key as OutputPurpose] = value;
  }
  return limits;
}

function invalid(message: string): ValidationError {
  return new ValidationError("invalid_config", message);
}
