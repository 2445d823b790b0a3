/** Knowledge: documents a tenant uploads, ingested into an index that plans search. */
export { CHUNK_DEFAULTS, type Chunk, type ChunkOptions, chunkText } from "./chunk";
export { failDeadIngest } from "./dead-ingest";
export {
  createEmbedder,
  DEFAULT_EMBEDDING_MODEL,
  type Embedder,
  type EmbedderOptions,
} from "./embedder";
export {
  DOCUMENT_TYPES,
  documentType,
  ExtractError,
  extractText,
  isPdf,
  SUPPORTED_TYPES,
} from "./extract";
export {
  checkIndexName,
  cosine,
  type IndexHit,
  type IndexRow,
  type IndexSearch,
  type KnowledgeIndex,
} from "./index-port";
export { type IngestDeps, type IngestOutcome, IngestService } from "./ingest";
export type { IngestBudget } from "./ingest-budget";
export type {
  IngestPort,
  KnowledgeAddPort,
  KnowledgePort,
  KnowledgeSearchPort,
} from "./knowledge-port";
export { KnowledgeService, type KnowledgeServiceDeps } from "./knowledge-service";
export { KnowledgeMemory, type MemoryInput, type MemoryWritten } from "./memory-add";
export {
  type ChunkHit,
  DocumentId,
  DocumentStatus,
  IngestMessage,
  type KnowledgeBase,
  KnowledgeBaseInput,
  KnowledgeBaseName,
  type KnowledgeDocument,
  KnowledgeGraph,
  normalizeEntityName,
} from "./model";
export { DEFAULT_PDF_LIMITS, type PdfLimits } from "./pdf-text";
export {
  type GraphAnswer,
  KnowledgeSearch,
  type KnowledgeSearchDeps,
  type SearchScope,
} from "./search";
export { PresignInput, type Upload } from "./upload-input";
export { UPLOAD_URL_SECONDS } from "./upload-intake";
