/**
 * Knowledge bases and their documents as the API shows them, the ingest message
 * on the queue, and the `knowledge_graph` answer the LLM gives per chunk.
 */
import * as z from "zod";
import { DocumentId, IngestMessage, KnowledgeBaseName } from "./ingest-message";

export { DocumentId, IngestMessage, KnowledgeBaseName };

export const KnowledgeBaseInput = z
  .object({ name: KnowledgeBaseName, description: z.string().max(2000).default("") })
  .strict();
export type KnowledgeBaseInput = z.infer<typeof KnowledgeBaseInput>;

export const DocumentStatus = z.enum(["pending", "ingesting", "ready", "failed"]);
export type DocumentStatus = z.infer<typeof DocumentStatus>;

export interface KnowledgeBase {
  name: string;
  description: string;
  documents: number;
  chunks: number;
  created_at: string;
}

/** What one ingest spent on embeddings and graph extraction. */
export interface IngestUsage {
  llm_calls: number;
  embedding_tokens: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface KnowledgeDocument {
  document_id: string;
  filename: string;
  content_type: string;
  size: number;
  status: DocumentStatus;
  chunks: number;
  /** Why the last ingest failed: a stable code and what to do about it. */
  error: { code: string; message: string } | null;
  /** How far the ingest is: `extract`, `embed`, `graph`, `index`, then `done`. */
  progress: { stage: string; done: number; total: number } | null;
  usage: IngestUsage;
  created_at: string;
  updated_at: string;
}

/** The LLM's answer per chunk (`json_schema` name `knowledge_graph`). */
export const KnowledgeGraph = z.object({
  entities: z
    .array(z.object({ name: z.string().min(1).max(200), description: z.string().max(1000) }))
    .max(50),
  relationships: z
    .array(
      z.object({
        source: z.string().min(1).max(200),
        target: z.string().min(1).max(200),
        description: z.string().max(1000),
      }),
    )
    .max(100),
});
export type KnowledgeGraph = z.infer<typeof KnowledgeGraph>;

/** One chunk as `vector_search` returns it. */
export interface ChunkHit {
  chunk_id: string;
  text: string;
  knowledge_base: string;
  document_id: string;
  filename: string;
  position: number;
  score: number;
}

/**
 * The name entities are merged by: case, accents, punctuation and extra spaces
 * do not make two entities.
 *
 * @example
 * normalizeEntityName("  The Kyoto-Station ") // "the kyoto station"
 */
export function normalizeEntityName(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}
