/**
 * The first stage of an ingest: the document's original read (from the blobs for
 * a multipart upload, from the uploads bucket for a presigned one), its text
 * extracted and cut into chunks. What cannot be read fails the document with an
 * `ExtractError` that says why and what to do.
 */
import type { Blobs } from "../ports/blobs";
import type { DocumentUploads } from "../ports/uploads";
import { type Chunk, chunkText } from "./chunk";
import { type DOCUMENT_TYPES, ExtractError, extractText } from "./extract";
import type { PdfLimits } from "./pdf-text";
import { type DocumentRecord, documentBlobPrefix, uploadKey } from "./records";

/** Where originals are read from. */
export interface OriginalSource {
  blobs: Blobs;
  /** Where presigned uploads land; none: only multipart documents are read. */
  uploads?: DocumentUploads;
}

/**
 * The original's bytes; `original_missing` when it is gone, `too_large` when a
 * presigned upload was replaced by one over `maxPresigned` after it arrived.
 */
export async function readOriginal(
  source: OriginalSource,
  record: DocumentRecord,
  maxPresigned: number,
): Promise<Uint8Array> {
  const { tenant_id: tenant, knowledge_base: kb, document_id: documentId, version } = record;
  const bytes =
    record.upload === "multipart"
      ? await source.blobs.get(documentBlobPrefix(tenant, kb, documentId, version), record.sha256)
      : ((await source.uploads?.get(uploadKey(record), maxPresigned)) ?? null);
  if (bytes === null)
    throw new ExtractError(
      "original_missing",
      "the uploaded original is gone from storage: upload the document again",
    );
  if (record.upload !== "multipart" && bytes.byteLength > maxPresigned) {
    // PUT again through the same URL, bigger, after its size was checked on arrival.
    throw new ExtractError(
      "too_large",
      `the upload is now over the ${maxPresigned} bytes a document may have (it was replaced after it arrived): split it, and upload it again`,
    );
  }
  return bytes;
}

/** The document's text in chunks; `too_many_chunks` when there would be more than chunking allows. */
export async function documentChunks(
  bytes: Uint8Array,
  record: DocumentRecord,
  pdfLimits?: PdfLimits,
): Promise<Chunk[]> {
  const text = await extractText(
    bytes,
    record.content_type as keyof typeof DOCUMENT_TYPES,
    pdfLimits,
  );
  try {
    return chunkText(text);
  } catch (error) {
    throw new ExtractError("too_many_chunks", (error as Error).message);
  }
}
