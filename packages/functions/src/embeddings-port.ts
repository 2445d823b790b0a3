/**
 * The embeddings port from configuration: Titan Text Embeddings on Amazon
 * Bedrock (`EMBEDDING_PROVIDER`, by default `LLM_PROVIDER`, set to `bedrock`),
 * or the same OpenAI-compatible server as the LLM (`OPENAI_API_KEY`,
 * `OPENAI_BASE_URL`). With neither, a port that fails each call saying what to
 * set. Only the knowledge function (and the local stack) import this file, so that the
 * other functions' bundles do not carry the vendors' clients.
 */
import { lazyBedrockEmbeddings, lazyOpenAiEmbeddings } from "@stackvm/aws/lambda-knowledge";
import { type EmbeddingPort, StackVMError } from "@stackvm/core";
import type { RuntimeConfig } from "./config";
import { bedrockOptions } from "./llm-provider";

const unconfiguredEmbeddings: EmbeddingPort = {
  async embed() {
    throw new StackVMError(
      "step",
      "embeddings_not_configured",
      "no embedding server is configured: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama with EMBEDDING_MODEL=nomic-embed-text), then restart",
    );
  },
};

/** True when an embedding endpoint is configured (Bedrock, or an OpenAI-compatible server). */
export function embeddingsConfigured(config: Pick<RuntimeConfig, "openai" | "providers">): boolean {
  return (
    config.providers.embeddings === "bedrock" || !!config.openai.apiKey || !!config.openai.baseURL
  );
}

export function embeddingsPort(config: Pick<RuntimeConfig, "openai" | "providers">): EmbeddingPort {
  if (config.providers.embeddings === "bedrock") {
    return lazyBedrockEmbeddings(bedrockOptions(config.providers));
  }
  const { openai } = config;
  if (!openai.apiKey && !openai.baseURL) return unconfiguredEmbeddings;
  return lazyOpenAiEmbeddings({
    apiKey: openai.apiKey ?? "none",
    ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
  });
}
