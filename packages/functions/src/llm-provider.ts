/**
 * Which service answers the LLM and embedding calls: `LLM_PROVIDER=openai` (the
 * default: any OpenAI-compatible server, by `OPENAI_BASE_URL` and
 * `OPENAI_API_KEY`) or `LLM_PROVIDER=bedrock` (Amazon Bedrock through the
 * function's IAM role, no outside key). Embeddings follow the LLM unless
 * `EMBEDDING_PROVIDER` says otherwise.
 */

export const PROVIDERS = ["openai", "bedrock"] as const;

export type Provider = (typeof PROVIDERS)[number];

/**
 * What `LLM_PROVIDER` and `REASON_LLM_PROVIDER` take: a provider, or `ollama`, the
 * original StackVM's setting, which is the `openai` provider at Ollama's
 * OpenAI-compatible endpoint (`OLLAMA_BASE_URL` + `/v1`).
 */
export const LLM_PROVIDER_SETTINGS = ["openai", "bedrock", "ollama"] as const;
export type LlmProviderSetting = (typeof LLM_PROVIDER_SETTINGS)[number];

/** Where Ollama listens when `OLLAMA_BASE_URL` is not set (its own default). */
export const DEFAULT_OLLAMA_BASE_URL = "http://127.0.0.1:11434";

/** One LLM endpoint: the provider and, for an OpenAI-compatible server, its base URL and key. */
export interface LlmEndpoint {
  provider: Provider;
  /** What the setting said (`ollama` is the `openai` provider at Ollama's endpoint). */
  setting: LlmProviderSetting;
  openai: { apiKey: string | null; baseURL: string | null };
}

/** Ollama's OpenAI-compatible endpoint from `OLLAMA_BASE_URL` (`/v1` added once). */
export function ollamaEndpoint(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}

export interface ProviderConfig {
  llm: Provider;
  embeddings: Provider;
  /** Bedrock Runtime: `BEDROCK_REGION` (default `AWS_REGION`), `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (a local server). */
  bedrock: { region: string; endpoint: string | null };
}

/** The embedding model when `EMBEDDING_MODEL` is not set, by provider. */
export const DEFAULT_EMBEDDING_MODELS: Readonly<Record<Provider, string>> = {
  openai: "text-embedding-3-small",
  bedrock: "amazon.titan-embed-text-v2:0",
};

/**
 * The chat model when `LLM_MODEL` is not set: OpenAI's small model, or none on
 * Bedrock, where a model must be enabled by hand and the stack grants access
 * to the configured ones only.
 */
export function defaultLlmModel(provider: Provider): string | null {
  return provider === "openai" ? "gpt-4o-mini" : null;
}

/** The Bedrock adapters' options: region and endpoint; credentials from the default chain (the function's role). */
export function bedrockOptions(providers: ProviderConfig): { region: string; endpoint?: string } {
  const { region, endpoint } = providers.bedrock;
  return endpoint === null ? { region } : { region, endpoint };
}

/** The settings as the environment gives them, checked. */
export function providerConfig(e: {
  AWS_REGION: string;
  LLM_PROVIDER: Provider | LlmProviderSetting;
  EMBEDDING_PROVIDER?: Provider | undefined;
  BEDROCK_REGION?: string | undefined;
  AWS_ENDPOINT_URL_BEDROCK_RUNTIME?: string | undefined;
}): ProviderConfig {
  return {
    llm: e.LLM_PROVIDER === "ollama" ? "openai" : e.LLM_PROVIDER,
    embeddings: e.EMBEDDING_PROVIDER ?? (e.LLM_PROVIDER === "ollama" ? "openai" : e.LLM_PROVIDER),
    bedrock: {
      region: e.BEDROCK_REGION ?? e.AWS_REGION,
      endpoint: e.AWS_ENDPOINT_URL_BEDROCK_RUNTIME ?? null,
    },
  };
}
