/**
 * The knowledge parts of the system, built from its ports: the knowledge bases
 * and uploads (API), the ingest (worker), the search behind the two tools. The
 * same wiring runs on AWS (LanceDB on S3) and locally (LanceDB on the S3
 * emulator).
 */
import { lazyOpenAiEmbeddings } from "@stackvm/aws/lambda-worker";
import {
  type Blobs,
  type Clock,
  createEmbedder,
  createLlmSession,
  type EmbeddingPort,
  IngestService,
  type ItemStore,
  type KnowledgeIndex,
  KnowledgeSearch,
  KnowledgeService,
  knowledgeTools,
  type LlmConfig,
  type LlmPort,
  type Log,
  type Queue,
  StackVMError,
} from "@stackvm/core";

export interface KnowledgeOptions {
  /** `EMBEDDING_MODEL`. */
  embeddingModel: string;
  /** The largest document one multipart upload may carry. */
  maxUploadBytes: number;
}

export interface KnowledgePorts {
  items: ItemStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  llm: LlmPort;
  index: KnowledgeIndex;
  embeddings: EmbeddingPort;
}

/** Knowledge bases (API), ingest (worker) and the `vector_search` / `retrieve_knowledge_graph` tools. */
export function createKnowledge(
  ports: KnowledgePorts,
  llm: LlmConfig,
  options: KnowledgeOptions,
  log: Log,
) {
  const service = new KnowledgeService({
    items: ports.items,
    blobs: ports.blobs,
    queue: ports.queue,
    clock: ports.clock,
    maxUploadBytes: options.maxUploadBytes,
  });
  const embedder = createEmbedder({
    port: ports.embeddings,
    model: options.embeddingModel,
    llm,
    now: ports.clock.now,
  });
  const ingest = new IngestService({
    items: ports.items,
    blobs: ports.blobs,
    clock: ports.clock,
    index: ports.index,
    embedder,
    llm: () => createLlmSession({ port: ports.llm, config: llm, budget: {}, now: ports.clock.now }),
    log,
  });
  const search = new KnowledgeSearch({ knowledge: service, index: ports.index, embedder });
  return { service, ingest, search, tools: knowledgeTools(search) };
}

export type Knowledge = ReturnType<typeof createKnowledge>;

const unconfiguredEmbeddings: EmbeddingPort = {
  async embed() {
    throw new StackVMError(
      "step",
      "embeddings_not_configured",
      "no embedding server is configured: set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama with EMBEDDING_MODEL=nomic-embed-text), then restart",
    );
  },
};

/** The embeddings port from the same settings as the LLM (`OPENAI_API_KEY`, `OPENAI_BASE_URL`). */
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
