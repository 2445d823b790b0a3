/**
 * Where knowledge bases and documents live in the item store (keys in
 * `store/keys.ts`, reads in `store/knowledge-store.ts`) and the blobs:
 * - a knowledge base: `T#{tenant}` / `KB#{name}`;
 * - a document: `T#{tenant}#KB#{name}` / `D#{document_id}`, so that one query
 *   lists a knowledge base's documents and none crosses tenants;
 * - a document's original: blobs under `k/{tenant}/{name}/{document_id}/{version}`.
 */
import type { Item } from "../ports/item-store";
import type { DocumentStatus, IngestUsage, KnowledgeDocument } from "./model";

/** The largest presigned upload a document may be (the documented 100 MiB). */
export const MAX_PRESIGNED_BYTES = 100 * 1024 * 1024;

export const documentBlobPrefix = (
  tenant: string,
  kb: string,
  documentId: string,
  version?: number,
): string => `k/${tenant}/${kb}/${documentId}${version === undefined ? "" : `/${version}`}`;
export const kbBlobPrefix = (tenant: string, kb: string): string => `k/${tenant}/${kb}`;

/** The message group of a knowledge base: its index has one writer at a time. */
export const ingestGroup = (tenant: string, kb: string): string => `kb#${tenant}#${kb}`;

export const ZERO_INGEST_USAGE: IngestUsage = {
  llm_calls: 0,
  embedding_tokens: 0,
  input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
};

/** A document record as stored. */
export interface DocumentRecord extends Item {
  tenant_id: string;
  knowledge_base: string;
  document_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  version: number;
  status: DocumentStatus;
  chunks: number;
  error: { code: string; message: string } | null;
  progress: { stage: string; done: number; total: number } | null;
  usage: IngestUsage;
  /** `multipart`; `presigned` until the client's PUT is seen, then `received`. */
  upload: "multipart" | "presigned" | "received";
  /**
   * The graphs a failed delivery of this version's ingest already had, and the
   * calls it made (a blob beside the original): the next delivery asks the LLM
   * only for the chunks without one (`graph-checkpoint.ts`).
   */
  graph_checkpoint?: { hash: string; sha256: string } | null;
  created_at: string;
  updated_at: string;
}

/** The document as the API shows it. */
export function presentDocument(record: DocumentRecord): KnowledgeDocument {
  return {
    document_id: record.document_id,
    filename: record.filename,
    content_type: record.content_type,
    size: record.size,
    status: record.status,
    chunks: record.chunks,
    error: record.error ?? null,
    progress: record.progress ?? null,
    usage: record.usage ?? ZERO_INGEST_USAGE,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** Where a presigned upload's object lands. */
export function uploadKey(
  record: Pick<DocumentRecord, "tenant_id" | "knowledge_base" | "document_id" | "version">,
): string {
  return `${documentBlobPrefix(record.tenant_id, record.knowledge_base, record.document_id, record.version)}/upload`;
}
