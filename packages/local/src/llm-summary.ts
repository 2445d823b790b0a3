/**
 * Which LLM this process would call, in words for the start-up banner, and
 * whether one is configured at all (without one, a goal is refused at once
 * with a 422 that says what to set, instead of failing a moment later).
 */
import type { Provider, RuntimeConfig } from "@stackvm/functions";

export interface LlmSummary {
  /** The endpoint's base URL, or OpenAI's when only a key is set. */
  endpoint: string;
  /** The reasoning roles' own endpoint (`REASON_*`), in the same words; null: the same as the steps'. */
  reasonEndpoint?: string | null;
  models: { planner: string; generation: string; evaluation: string; embedding: string };
  /** How long one answer may take (`LLM_TIMEOUT_MS`) and one unanswered server is retried. */
  limits: { timeoutMs: number; unreachableSeconds: number };
}

/**
 * The configured LLM: Amazon Bedrock with `LLM_PROVIDER=bedrock`, else the
 * OpenAI-compatible server, or null when neither `OPENAI_BASE_URL` nor
 * `OPENAI_API_KEY` is set.
 */
export function llmSummary(config: RuntimeConfig): LlmSummary | null {
  const { apiKey, baseURL } = config.openai;
  if (config.providers.llm !== "bedrock" && !apiKey && !baseURL) return null;
  const reason = config.reasonLlm ?? null;
  return {
    endpoint: endpointText(config.providers.llm, config.openai, config.providers.bedrock),
    reasonEndpoint:
      reason && endpointText(reason.provider, reason.openai, config.providers.bedrock),
    models: {
      planner: config.llm.models.reason,
      generation: config.llm.models.default,
      evaluation: config.llm.models.eval,
      embedding: config.knowledge.embeddingModel,
    },
    limits: {
      timeoutMs: config.llm.timeoutMs,
      unreachableSeconds: config.llmUnreachableSeconds,
    },
  };
}

/** Where one endpoint is, in the banner's and the doctor's words. */
export function endpointText(
  provider: Provider,
  openai: { apiKey: string | null; baseURL: string | null },
  bedrock: RuntimeConfig["providers"]["bedrock"],
): string {
  if (provider === "bedrock") {
    return `Amazon Bedrock in ${bedrock.region}${bedrock.endpoint ? ` at ${bedrock.endpoint}` : ""} (AWS credentials: the role on Lambda)`;
  }
  return openai.baseURL ?? "https://api.openai.com/v1 (OpenAI)";
}

/** The banner's lines about the LLM: what is configured, or what its absence means. */
export function llmBannerLines(summary: LlmSummary | null): string[] {
  if (!summary) {
    return [
      "  LLM:      none configured: goals are refused (422); plans you write run, except LLM steps",
      "            set OPENAI_BASE_URL (e.g. Ollama: http://127.0.0.1:11434/v1) or OPENAI_API_KEY, and LLM_MODEL",
      "            or LLM_PROVIDER=bedrock with a Bedrock LLM_MODEL (your AWS credentials)",
    ];
  }
  const m = summary.models;
  const where = summary.reasonEndpoint
    ? [
        `  LLM:      steps ${summary.endpoint}`,
        `            plans, plan updates, evaluations ${summary.reasonEndpoint} (REASON_*)`,
      ]
    : [`  LLM:      ${summary.endpoint}`];
  return [
    ...where,
    `            planner ${m.planner}, generation ${m.generation}, evaluation ${m.evaluation}, embedding ${m.embedding}`,
    `            an answer may take ${seconds(summary.limits.timeoutMs)} (LLM_TIMEOUT_MS); a server that does not answer fails a task after ${summary.limits.unreachableSeconds} s (STACKVM_LLM_UNREACHABLE_SECONDS)`,
  ];
}

/** 300000 → "300 s (5 min)": the banner's words for a limit. */
function seconds(ms: number): string {
  const s = ms / 1000;
  const text = Number.isInteger(s) ? `${s} s` : `${ms} ms`;
  return s >= 120 && s % 60 === 0 ? `${text} (${s / 60} min)` : text;
}
