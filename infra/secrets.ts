/**
 * The settings that differ per deployment and must not sit in the repository,
 * as SST secrets (`npx sst secret set <Name> <value> --stage <stage>`), stored
 * encrypted in the app's state. Each is linked only to the functions that read
 * it, and also passed as the environment variable that the entry file reads
 * (`loadLlmConfig` and the API's settings read `process.env`, not SST's
 * `Resource`). An empty value means "not set": the variable is left out.
 */

/** The OpenAI-compatible server: API key, base URL and models. Only the worker calls the LLM. */
export const llmSecrets = {
  /** Required. */
  apiKey: new sst.Secret("OpenaiApiKey"),
  /** Empty means OpenAI's own endpoint. */
  baseUrl: new sst.Secret("OpenaiBaseUrl", ""),
  model: new sst.Secret("LlmModel", "gpt-4o-mini"),
  /** Empty means `LlmModel`. */
  reasonModel: new sst.Secret("ReasonLlmModel", ""),
  /** Empty means `ReasonLlmModel`. */
  evalModel: new sst.Secret("EvalLlmModel", ""),
};

/** The operator key that opens only `/v1/admin/*` on the API. Required, 16 characters or more. */
export const adminKey = new sst.Secret("AdminKey");

/** The LLM secrets as the environment variables the worker's entry file reads. */
export const llmEnvironment = {
  OPENAI_API_KEY: llmSecrets.apiKey.value,
  OPENAI_BASE_URL: llmSecrets.baseUrl.value,
  LLM_MODEL: llmSecrets.model.value,
  REASON_LLM_MODEL: llmSecrets.reasonModel.value,
  EVAL_LLM_MODEL: llmSecrets.evalModel.value,
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
