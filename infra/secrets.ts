/**
 * The settings that differ per deployment and must not sit in the repository,
 * as SST secrets (`npx sst secret set <Name> <value> --stage <stage>`), stored
 * encrypted in the app's state. Each is linked only to the functions that read
 * it, and also passed as the environment variable that the entry file reads
 * (`loadLlmConfig` and the API's settings read `process.env`, not SST's
 * `Resource`). An empty value means "not set": the variable is left out.
 */

/**
 * The LLM: which provider, the OpenAI-compatible server's key and base URL, the
 * models. Only the worker calls the LLM. With `LlmProvider` set to `bedrock` no
 * key is needed: the worker's role may invoke the configured models (bedrock.ts).
 */
export const llmSecrets = {
  /** `openai` (any OpenAI-compatible server), `bedrock` (Amazon Bedrock, the worker's role) or `ollama` (`OllamaBaseUrl`). */
  provider: new sst.Secret("LlmProvider", "openai"),
  /** With `ollama`: Ollama's server (its OpenAI-compatible API is this + /v1); empty means http://127.0.0.1:11434. */
  ollamaBaseUrl: new sst.Secret("OllamaBaseUrl", ""),
  /** Required with the `openai` provider, unless `OpenaiBaseUrl` names a server that needs none. */
  apiKey: new sst.Secret("OpenaiApiKey", ""),
  /** Empty means OpenAI's own endpoint. */
  baseUrl: new sst.Secret("OpenaiBaseUrl", ""),
  model: new sst.Secret("LlmModel", "gpt-4o-mini"),
  /** Empty means `LlmModel`. */
  reasonModel: new sst.Secret("ReasonLlmModel", ""),
  /** Empty means `ReasonLlmModel`. */
  evalModel: new sst.Secret("EvalLlmModel", ""),
  /** Empty means the provider's: text-embedding-3-small, or amazon.titan-embed-text-v2:0 on Bedrock. */
  embeddingModel: new sst.Secret("EmbeddingModel", ""),
  /** Bedrock only: where the models are enabled; empty means the app's region. */
  bedrockRegion: new sst.Secret("BedrockRegion", ""),
  /** The steps' temperature, 0 to 2; empty means the server's own. */
  temperature: new sst.Secret("LlmTemperature", ""),
  /** The plans' temperature; empty means `LlmTemperature`. */
  reasonTemperature: new sst.Secret("ReasonLlmTemperature", ""),
  /** The evaluations' temperature; empty means `ReasonLlmTemperature`. */
  evalTemperature: new sst.Secret("EvalLlmTemperature", ""),
};

/**
 * The reasoning roles' own server (plans, plan updates, evaluations), for the
 * worker only: empty, they use the steps' server above. Its key is its own:
 * `OpenaiApiKey` is never sent to it.
 */
export const reasonLlmSecrets = {
  /** `openai`, `bedrock` or `ollama`; empty means `openai` when a base URL or key is set. */
  provider: new sst.Secret("ReasonLlmProvider", ""),
  apiKey: new sst.Secret("ReasonOpenaiApiKey", ""),
  /** Empty means OpenAI's own endpoint (then `ReasonOpenaiApiKey` is needed). */
  baseUrl: new sst.Secret("ReasonOpenaiBaseUrl", ""),
};

/** The reasoning server's secrets as the worker's environment variables. */
export const reasonLlmEnvironment = {
  REASON_LLM_PROVIDER: reasonLlmSecrets.provider.value,
  REASON_OPENAI_API_KEY: reasonLlmSecrets.apiKey.value,
  REASON_OPENAI_BASE_URL: reasonLlmSecrets.baseUrl.value,
};

/**
 * `web_search`'s provider and its key, set like the LLM's: only the worker (which
 * runs the search, and plans with the tool's description) reads them. An empty
 * provider means none: the tool then fails with `web_search_not_configured`.
 */
export const webSearchSecrets = {
  /** `tavily` or `brave`; empty means no web search. */
  provider: new sst.Secret("WebSearchProvider", ""),
  /** The provider's API key (Tavily's `tvly-…`, Brave's subscription token). */
  apiKey: new sst.Secret("WebSearchApiKey", ""),
  /** Dollars per search charged to the task; empty means the provider's listed price. */
  priceUsd: new sst.Secret("WebSearchPriceUsd", ""),
};

/** The web search secrets as the environment variables the worker's entry file reads. */
export const webSearchEnvironment = {
  STACKVM_WEB_SEARCH_PROVIDER: webSearchSecrets.provider.value,
  STACKVM_WEB_SEARCH_API_KEY: webSearchSecrets.apiKey.value,
  STACKVM_WEB_SEARCH_PRICE_USD: webSearchSecrets.priceUsd.value,
};

/** The operator key that opens only `/v1/admin/*` on the API. Required, 16 characters or more. */
export const adminKey = new sst.Secret("AdminKey");

/** The LLM secrets as the environment variables the worker's entry file reads. */
export const llmEnvironment = {
  LLM_PROVIDER: llmSecrets.provider.value,
  OPENAI_API_KEY: llmSecrets.apiKey.value,
  OPENAI_BASE_URL: llmSecrets.baseUrl.value,
  LLM_MODEL: llmSecrets.model.value,
  REASON_LLM_MODEL: llmSecrets.reasonModel.value,
  EVAL_LLM_MODEL: llmSecrets.evalModel.value,
  EMBEDDING_MODEL: llmSecrets.embeddingModel.value,
  BEDROCK_REGION: llmSecrets.bedrockRegion.value,
  OLLAMA_BASE_URL: llmSecrets.ollamaBaseUrl.value,
  LLM_TEMPERATURE: llmSecrets.temperature.value,
  REASON_LLM_TEMPERATURE: llmSecrets.reasonTemperature.value,
  EVAL_LLM_TEMPERATURE: llmSecrets.evalTemperature.value,
};

/**
 * Whether the deployment has an LLM, for the functions that start tasks without
 * calling one (the API, the scheduler): a goal is refused at once with 422 when
 * there is none, instead of being accepted and failing a moment later. Only the
 * verdict reaches them, not the key.
 */
export const llmConfiguredEnvironment = {
  STACKVM_LLM_CONFIGURED: $resolve([
    llmSecrets.provider.value,
    llmSecrets.apiKey.value,
    llmSecrets.baseUrl.value,
  ]).apply(([provider, apiKey, baseUrl]) =>
    provider === "bedrock" || provider === "ollama" || apiKey !== "" || baseUrl !== ""
      ? "true"
      : "false",
  ),
};

/**
 * Whether the deployment can make embeddings, for the API: a document upload is
 * refused at once (422 `embeddings_not_configured`) when it cannot, instead of
 * being stored and failing in the knowledge function. The knowledge function's
 * embeddings follow `LlmProvider` (Bedrock's Titan, or the OpenAI-compatible
 * server of `OpenaiApiKey`/`OpenaiBaseUrl`), so the verdict comes from the same
 * secrets; only the verdict reaches the API, never the key.
 */
export const embeddingsConfiguredEnvironment = {
  STACKVM_EMBEDDINGS_CONFIGURED: llmConfiguredEnvironment.STACKVM_LLM_CONFIGURED,
};

/**
 * An environment without its empty values: an empty secret means "not set",
 * and a variable that is set but empty would fail the entry file's
 * validation (an empty `OPENAI_BASE_URL` is not a URL).
 */
export function withoutEmpty(environment: Record<string, $util.Input<string>>) {
  return $resolve(environment).apply((values) =>
    Object.fromEntries(Object.entries(values).filter(([, value]) => value !== "")),
  );
}
