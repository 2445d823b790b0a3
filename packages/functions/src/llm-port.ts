/**
 * The LLM port from configuration: any OpenAI-compatible server (OpenAI, Ollama,
 * vLLM, LM Studio) by `OPENAI_BASE_URL` and `OPENAI_API_KEY`. With neither set,
 * a port that fails each call with a step error that says what to set. The
 * `openai` client is imported by the first call (`lazyOpenAiLlm`).
 */
import { lazyOpenAiLlm } from "@stackvm/aws/lambda-worker";
import type { LlmPort } from "@stackvm/core";
import { unconfiguredLlm } from "./unconfigured-llm";

export function llmPort(openai: { apiKey: string | null; baseURL: string | null }): LlmPort {
  if (!openai.apiKey && !openai.baseURL) return unconfiguredLlm;
  return lazyOpenAiLlm({
    // Local servers such as Ollama need no key, but the client insists on one.
    apiKey: openai.apiKey ?? "none",
    ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
  });
}
