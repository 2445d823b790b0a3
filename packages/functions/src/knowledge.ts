/**
 * The knowledge parts of the system, built from its ports: the knowledge bases
 * and uploads (API), the ingest (worker), the search behind the two tools. The
 * same wiring runs on AWS (LanceDB on S3) and locally (LanceDB on the S3
 * emulator).
 */
import {
  type Blobs,
  type Clock,
  createEmbedder,
  createLlmSession,
  type DocumentUploads,
  type EmbeddingPort,
  type IngestBudget,
  IngestService,
  type ItemStore,
  type KnowledgeIndex,
  KnowledgeMemory,
  type KnowledgePort,
  KnowledgeSearch,
  KnowledgeService,
  KnowledgeStore,
  knowledgeTools,
  type LlmConfig,
  type LlmPort,
  type Log,
  type PdfLimits,
  type Queue,
} from "@stackvm/core";

export interface KnowledgeOptions {
  /** `EMBEDDING_MODEL`. */
  embeddingModel: string;
  /** The embedding server is on loopback or a private network: its calls are not priced as OpenAI's. */
  embeddingsLocal?: boolean;
  /** The largest document one multipart upload may carry. */
  maxUploadBytes: number;
  /** What reading one PDF may take (`STACKVM_KNOWLEDGE_PDF_MEMORY_MB`, `_PDF_SECONDS`). */
  pdfLimits?: PdfLimits;
  /** False when no embedding endpoint is configured: uploads are refused at once (422). */
  embeddingsConfigured?: boolean;
}

export interface KnowledgePorts {
  items: ItemStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  llm: LlmPort;
  index: KnowledgeIndex;
  embeddings: EmbeddingPort;
  /** Presigned uploads to S3; none: large documents are refused with a reason. */
  uploads?: DocumentUploads;
}

/** Knowledge bases (API), ingest (worker) and the `vector_search` / `retrieve_knowledge_graph` / `knowledge_add` tools. */
export function createKnowledge(
  ports: KnowledgePorts,
  llm: LlmConfig,
  options: KnowledgeOptions,
  log: Log,
  /** The tenants' monthly budgets, which ingest spends from. */
  budget?: IngestBudget,
) {
  const knowledgeStore = new KnowledgeStore(ports.items);
  const service = new KnowledgeService({
    knowledge: knowledgeStore,
    blobs: ports.blobs,
    queue: ports.queue,
    clock: ports.clock,
    maxUploadBytes: options.maxUploadBytes,
    ...(ports.uploads ? { uploads: ports.uploads } : {}),
    ...(options.embeddingsConfigured === undefined
      ? {}
      : { embeddingsConfigured: options.embeddingsConfigured }),
  });
  const embedder = createEmbedder({
    port: ports.embeddings,
    model: options.embeddingModel,
    llm,
    now: ports.clock.now,
    ...(options.embeddingsLocal ? { local: true } : {}),
  });
  const ingest = new IngestService({
    knowledge: knowledgeStore,
    blobs: ports.blobs,
    ...(ports.uploads ? { uploads: ports.uploads } : {}),
    clock: ports.clock,
    index: ports.index,
    embedder,
    llm: (budget) =>
      createLlmSession({ port: ports.llm, config: llm, budget, now: ports.clock.now }),
    ...(budget ? { budget } : {}),
    ...(options.pdfLimits ? { pdfLimits: options.pdfLimits } : {}),
    log,
  });
  const search = new KnowledgeSearch({ knowledge: service, index: ports.index, embedder });
  const memory = new KnowledgeMemory({ knowledge: service, ingest });
  const port = knowledgePortOf({ search, ingest, memory });
  return { service, ingest, search, memory, tools: knowledgeTools(port) };
}

export type Knowledge = ReturnType<typeof createKnowledge>;

/** The knowledge port served by this process's own services (the knowledge function's, the local stack's). */
export function knowledgePortOf(
  knowledge: Pick<Knowledge, "search" | "ingest" | "memory">,
): KnowledgePort {
  return {
    chunks: (scope, query, topK) => knowledge.search.chunks(scope, query, topK),
    graph: (scope, query) => knowledge.search.graph(scope, query),
    add: (scope, input) => knowledge.memory.add(scope, input),
    handle: (message, lastAttempt) => knowledge.ingest.handle(message, lastAttempt),
  };
}
