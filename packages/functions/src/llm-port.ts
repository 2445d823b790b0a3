/**
 * The LLM port from configuration: Amazon Bedrock's Converse API with the
 * function's IAM role (`LLM_PROVIDER=bedrock`), or any OpenAI-compatible server
 * (OpenAI, Ollama, vLLM, LM Studio) by `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
 * With neither, a port that fails each call with a step error that says what
 * to set. The vendor's client is imported by the first call. With a reasoning
 * endpoint of its own (`REASON_LLM_PROVIDER`, `REASON_OPENAI_BASE_URL`, ...), the
 * plans, plan updates and evaluations go there and every other call to the steps'.
 */
import { lazyBedrockLlm, lazyOpenAiLlm } from "@stackvm/aws/lambda-worker";
import type { LlmPort, LlmRequest } from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import { bedrockOptions, type LlmEndpoint, type ProviderConfig } from "./llm-provider";
import { unconfiguredLlm } from "./unconfigured-llm";

export function llmPort(
  config: Pick<RuntimeConfig, "openai" | "providers"> & {
    reasonLlm?: LlmEndpoint | null;
  },
): LlmPort {
  const steps = endpointPort(config.providers.llm, config.openai, config.providers);
  if (!config.reasonLlm) return steps;
  const { provider, openai } = config.reasonLlm;
  return roleRouted(steps, endpointPort(provider, openai, config.providers));
}

function endpointPort(
  provider: LlmEndpoint["provider"],
  openai: LlmEndpoint["openai"],
  providers: ProviderConfig,
): LlmPort {
  if (provider === "bedrock") return lazyBedrockLlm(bedrockOptions(providers));
  if (!openai.apiKey && !openai.baseURL) return unconfiguredLlm;
  return lazyOpenAiLlm({
    // Local servers such as Ollama need no key, but the client insists on one.
    apiKey: openai.apiKey ?? "none",
    ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
  });
}

/** Whether a call of this role goes to the reasoning endpoint: plans, plan updates, evaluations. */
export const isReasoningRole = (role: LlmRequest["role"]) => role === "reason" || role === "eval";

/** One port over two: each call to its role's server, each context asked of that server. */
export function roleRouted(steps: LlmPort, reason: LlmPort): LlmPort {
  const portOf = (role: LlmRequest["role"]) => (isReasoningRole(role) ? reason : steps);
  return {
    complete: (request) => portOf(request.role).complete(request),
    contextTokens: async (model, options) => portOf(options?.role).contextTokens?.(model, options),
    countTokens: async (model, messages, role) => portOf(role).countTokens?.(model, messages, role),
  };
}
