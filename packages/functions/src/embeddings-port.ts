/**
 * The embeddings port from configuration: the same OpenAI-compatible server as
 * the LLM (`OPENAI_API_KEY`, `OPENAI_BASE_URL`). With neither set, a port that
 * fails each call saying what to set. Only the worker (and the local stack)
 * import this file, so that the other functions' bundles do not carry `openai`.
 */
import { lazyOpenAiEmbeddings } from "@stackvm/aws/lambda-worker";
import { type EmbeddingPort, StackVMError } from "@stackvm/core";

const unconfiguredEmbeddings: EmbeddingPort = {
  async embed() {
    throw new StackVMError(
      "step",
      "embeddings_not_configured",
      "no embedding server is configured: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama with EMBEDDING_MODEL=nomic-embed-text), then restart",
    );
  },
};

export function embeddingsPort(openai: {
  apiKey: string | null;
  baseURL: string | null;
}): EmbeddingPort {
  if (!openai.apiKey && !openai.baseURL) return unconfiguredEmbeddings;
  return lazyOpenAiEmbeddings({
    apiKey: openai.apiKey ?? "none",
    ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
  });
}
