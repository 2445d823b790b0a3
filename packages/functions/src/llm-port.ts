/**
 * The LLM port from configuration: any OpenAI-compatible server (OpenAI, Ollama,
 * vLLM, LM Studio) by `OPENAI_BASE_URL` and `OPENAI_API_KEY`. With neither set,
 * a port that fails each call with a step error that says what to set.
 */
import { OpenAiLlm } from "@stackvm/aws";
import { type LlmPort, StackVMError } from "@stackvm/core";

export const unconfiguredLlm: LlmPort = {
  async complete() {
    throw new StackVMError(
      "forbidden",
      "llm_not_configured",
      "no LLM is configured: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server such as Ollama at http://127.0.0.1:11434/v1) and LLM_MODEL, then restart",
    );
  },
};

export function llmPort(openai: { apiKey: string | null; baseURL: string | null }): LlmPort {
  if (!openai.apiKey && !openai.baseURL) return unconfiguredLlm;
  return new OpenAiLlm({
    // Local servers such as Ollama need no key, but the client insists on one.
    apiKey: openai.apiKey ?? "none",
    ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
  });
}
