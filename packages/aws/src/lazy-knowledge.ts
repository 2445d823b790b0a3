/**
 * The knowledge adapters, built on first use: the `openai` or Bedrock client for
 * embeddings, and LanceDB (whose native module is about 200 MB) for the index.
 * A function that never touches knowledge loads neither.
 */

import type { EmbeddingPort, KnowledgeIndex } from "@stackvm/core";
import { lazyPort } from "@stackvm/core";
import type { BedrockOptions } from "./bedrock-llm";
import type { LanceKnowledgeIndexOptions } from "./lance-index";

/** Embeddings from any OpenAI-compatible server: loaded by the first call. */
export function lazyOpenAiEmbeddings(options: { apiKey: string; baseURL?: string }): EmbeddingPort {
  return lazyPort<EmbeddingPort>(async () => {
    const { OpenAiEmbeddings } = await import("./openai-embeddings");
    return new OpenAiEmbeddings(options);
  });
}

/** Titan Text Embeddings on Amazon Bedrock with the function's role: loaded by the first call. */
export function lazyBedrockEmbeddings(options: BedrockOptions): EmbeddingPort {
  return lazyPort<EmbeddingPort>(async () => {
    const { BedrockEmbeddings } = await import("./bedrock-embeddings");
    return new BedrockEmbeddings(options);
  });
}

/** The LanceDB index on S3: loaded by the first search or write. */
export function lazyLanceIndex(options: LanceKnowledgeIndexOptions): KnowledgeIndex {
  return lazyPort<KnowledgeIndex>(async () => {
    const { LanceKnowledgeIndex } = await import("./lance-index");
    return new LanceKnowledgeIndex(options);
  });
}
