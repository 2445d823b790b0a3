/**
 * The LLM port from configuration: Amazon Bedrock's Converse API with the
 * function's IAM role (`LLM_PROVIDER=bedrock`), or any OpenAI-compatible server
 * (OpenAI, Ollama, vLLM, LM Studio) by `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
 * With neither, a port that fails each call with a step error that says what
 * to set. The vendor's client is imported by the first call.
 */
import { lazyBedrockLlm, lazyOpenAiLlm } from "@stackvm/aws/lambda-worker";
import type { LlmPort } from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import { bedrockOptions } from "./llm-provider";
import { unconfiguredLlm } from "./unconfigured-llm";

export function llmPort(config: Pick<RuntimeConfig, "openai" | "providers">): LlmPort {
  if (config.providers.llm === "bedrock") return lazyBedrockLlm(bedrockOptions(config.providers));
  const { openai } = config;
  if (!openai.apiKey && !openai.baseURL) return unconfiguredLlm;
  return lazyOpenAiLlm({
    // Local servers such as Ollama need no key, but the client insists on one.
    apiKey: openai.apiKey ?? "none",
    ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
  });
}
