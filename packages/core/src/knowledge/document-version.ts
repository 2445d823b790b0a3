/**
 * A new version of a document: written `pending` on condition that the version
 * it replaces is still the latest, so that of two uploads racing to replace one
 * document, one wins and the other is told to upload again.
 */
import { ConflictError, isErrorKind } from "../errors";
import type { Clock } from "../ports/clock";
import { documentKey } from "../store/keys";
import type { KnowledgeStore } from "../store/knowledge-store";
import { type DocumentRecord, ZERO_INGEST_USAGE } from "./records";

/** What an upload says of its version; the rest of the record is the same for every upload. */
export type VersionFields = Pick<
  DocumentRecord,
  "filename" | "content_type" | "size" | "sha256" | "upload" | "version" | "chunks"
>;

/**
 * Writes version n+1 of a document as `pending`; answers the record and the
 * version it replaced (null: the document is new). `fields` is called with the
 * new version before the write (a multipart upload stores its original there).
 */
export async function writeVersion(
  deps: { knowledge: KnowledgeStore; clock: Clock },
  tenant: string,
  kb: string,
  documentId: string,
  fields: (
    version: number,
    existing: DocumentRecord | null,
  ) => VersionFields | Promise<VersionFields>,
): Promise<{ record: DocumentRecord; previous: number | null }> {
  const key = documentKey(tenant, kb, documentId);
  const { knowledge, clock } = deps;
  const existing = (await knowledge.getDocument(tenant, kb, documentId)) as DocumentRecord | null;
  const version = (existing?.version ?? 0) + 1;
  const now = new Date(clock.now()).toISOString();
  const record: DocumentRecord = {
    ...key,
    tenant_id: tenant,
    knowledge_base: kb,
    document_id: documentId,
    ...(await fields(version, existing)),
    status: "pending",
    error: null,
    progress: null,
    usage: ZERO_INGEST_USAGE,
    created_at: existing?.created_at ?? now,
    updated_at: now,
  };
  try {
    await knowledge.putDocument(
      record,
      existing ? { equals: { version: existing.version } } : { exists: false },
    );
  } catch (error) {
    if (isErrorKind(error, "conflict")) {
      throw new ConflictError(
        `document '${documentId}' was replaced by another upload meanwhile: upload again`,
        "document_changed",
      );
    }
    throw error;
  }
  return { record, previous: existing?.version ?? null };
}
