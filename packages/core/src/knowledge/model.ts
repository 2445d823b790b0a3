/**
 * Knowledge bases and their documents as the API shows them, the ingest message
 * on the queue, and the `knowledge_graph` answer the LLM gives per chunk.
 */
import * as z from "zod";

export const KnowledgeBaseName = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, "a knowledge base name is 1 to 64 of a-z, 0-9, _ and -");

export const KnowledgeBaseInput = z
  .object({ name: KnowledgeBaseName, description: z.string().max(2000).default("") })
  .strict();
export type KnowledgeBaseInput = z.infer<typeof KnowledgeBaseInput>;

/** A document id: given by the uploader (to replace a document) or made at upload. */
export const DocumentId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "a document_id is 1 to 64 of A-Z, a-z, 0-9, _ and -");

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

/**
 * Work on a knowledge base's index, in the knowledge base's message group so that
 * one writer at a time touches it (only the worker loads the index): `ingest`
 * version `version` of a document (one document per message; a message for an
 * older version is stale), `delete` a document's rows, `drop` the whole table.
 */
export const IngestMessage = z.discriminatedUnion("op", [
  z
    .object({
      v: z.literal(1),
      kind: z.literal("ingest"),
      op: z.literal("ingest"),
      tenant_id: z.string().min(1).max(128),
      knowledge_base: KnowledgeBaseName,
      document_id: DocumentId,
      /** Each upload of the document bumps it. */
      version: z.number().int().min(1),
    })
    .strict(),
  z
    .object({
      v: z.literal(1),
      kind: z.literal("ingest"),
      op: z.literal("delete"),
      tenant_id: z.string().min(1).max(128),
      knowledge_base: KnowledgeBaseName,
      document_id: DocumentId,
    })
    .strict(),
  z
    .object({
      v: z.literal(1),
      kind: z.literal("ingest"),
      op: z.literal("drop"),
      tenant_id: z.string().min(1).max(128),
      knowledge_base: KnowledgeBaseName,
    })
    .strict(),
]);
export type IngestMessage = z.infer<typeof IngestMessage>;

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
