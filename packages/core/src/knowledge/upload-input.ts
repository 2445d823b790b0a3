/**
 * What an upload brings, checked before anything is written: the document id
 * asked for, a file name that is safe to show back, and a content type that
 * ingestion can read. Each refusal says what is wrong and how to send it right.
 */
import * as z from "zod";
import { StackVMError, ValidationError } from "../errors";
import { randomId } from "../ids";
import { type DOCUMENT_TYPES, documentType, SUPPORTED_TYPES } from "./extract";
import { DocumentId } from "./model";

export { checkFilename } from "./filename";
export { presignedUploads } from "./presigned-uploads";

/** `POST .../documents` with JSON: ask for a presigned upload URL. */
export const PresignInput = z
  .object({
    filename: z.string().min(1).max(255),
    content_type: z.string().min(1).max(200),
    document_id: DocumentId.optional(),
  })
  .strict();

/** An uploaded file, as the API's multipart parser hands it over. */
export interface Upload {
  filename: string;
  contentType: string | undefined;
  bytes: Uint8Array;
  /** Replace this document (or create it under this id). */
  documentId?: string;
}

/** The id of a document uploaded without one. */
export function newDocumentId(): string {
  return `doc_${randomId(16)}`;
}

/** The document id a multipart upload names, or `invalid_document_id` saying what is wrong with it. */
export function parseDocumentId(id: string): string {
  const parsed = DocumentId.safeParse(id);
  if (!parsed.success)
    throw new ValidationError(
      "invalid_document_id",
      `document_id '${id.slice(0, 80)}': ${parsed.error.issues[0]?.message}`,
    );
  return parsed.data;
}

/** The content type a document is read as, or a 422 that lists the ones ingestion reads. */
export function readableType(
  declared: string | undefined,
  filename: string,
): keyof typeof DOCUMENT_TYPES {
  const contentType = documentType(declared, filename);
  if (contentType === null) {
    throw new StackVMError(
      "invalid",
      "unsupported_document_type",
      `'${filename}' is ${declared ? `'${declared}'` : "of no content type"}, which ingestion cannot read: send one of ${SUPPORTED_TYPES} (or name the file with its extension)`,
    );
  }
  return contentType;
}
