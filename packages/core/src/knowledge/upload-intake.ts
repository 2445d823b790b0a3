/**
 * How a document comes in: a multipart upload (the original into the blobs, a
 * `pending` record, one ingest message), or a presigned upload URL for a large
 * one, whose ingest is queued when a read of the document sees its object has
 * arrived. Everything is checked before anything is written, so a refused
 * upload leaves nothing behind.
 */
import { isErrorKind, TooLargeError, ValidationError } from "../errors";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import type { DocumentUploads } from "../ports/uploads";
import type { KnowledgeStore } from "../store/knowledge-store";
import { writeVersion } from "./document-version";
import { sendIngest } from "./ingest-queue";
import type { KnowledgeDocument } from "./model";
import {
  type DocumentRecord,
  documentBlobPrefix,
  MAX_PRESIGNED_BYTES,
  presentDocument,
  uploadKey,
} from "./records";
import {
  checkFilename,
  newDocumentId,
  PresignInput,
  parseDocumentId,
  presignedUploads,
  readableType,
  type Upload,
} from "./upload-input";

/** How long a presigned upload URL is valid. */
export const UPLOAD_URL_SECONDS = 3600;

/** Where uploads go, and how large they may be. */
export interface UploadIntakeDeps {
  knowledge: KnowledgeStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  /** The largest document taken in one upload, in bytes. */
  maxUploadBytes: number;
  /** Presigned uploads straight to S3 for large documents; none: they are refused with a reason. */
  uploads?: DocumentUploads;
  /** The largest document a presigned upload may bring (checked when it arrives). */
  maxPresignedBytes?: number;
}

/**
 * Takes the documents of knowledge bases that exist (`KnowledgeService` checks
 * that, and that they could be indexed, first).
 */
export class UploadIntake {
  constructor(private readonly deps: UploadIntakeDeps) {}

  /** A `pending` presigned document and the URL its original is PUT to. */
  async presign(
    tenant: string,
    kb: string,
    body: unknown,
  ): Promise<{ document: KnowledgeDocument; upload_url: string; expires_in: number }> {
    const input = PresignInput.parse(body);
    const uploads = presignedUploads(this.deps.uploads);
    const documentId = input.document_id ?? newDocumentId();
    const filename = checkFilename(input.filename);
    const contentType = readableType(input.content_type, filename);
    const { record, previous } = await writeVersion(
      this.deps,
      tenant,
      kb,
      documentId,
      (version, existing) => ({
        filename,
        content_type: contentType,
        size: 0,
        sha256: "",
        upload: "presigned",
        version,
        chunks: existing?.chunks ?? 0,
      }),
    );
    if (previous)
      await this.deps.blobs.deletePrefix(documentBlobPrefix(tenant, kb, documentId, previous));
    const url = await uploads.presignPut(uploadKey(record), contentType, UPLOAD_URL_SECONDS);
    return { document: presentDocument(record), upload_url: url, expires_in: UPLOAD_URL_SECONDS };
  }

  /** Stores the original, writes a `pending` document, queues its ingest. */
  async upload(tenant: string, kb: string, upload: Upload): Promise<KnowledgeDocument> {
    const record = await this.store(tenant, kb, upload);
    await this.#enqueue(record);
    return presentDocument(record);
  }

  /**
   * Stores the original and writes a `pending` document, with no ingest queued:
   * the caller ingests it (`knowledge_add` does, in its step). The same checks
   * as an upload's, before anything is written.
   */
  async store(tenant: string, kb: string, upload: Upload): Promise<DocumentRecord> {
    const documentId =
      upload.documentId === undefined ? newDocumentId() : parseDocumentId(upload.documentId);
    const filename = checkFilename(upload.filename);
    const contentType = readableType(upload.contentType, filename);
    if (upload.bytes.byteLength === 0) {
      throw new ValidationError(
        "document_empty",
        `'${filename}' is empty: upload a file with content`,
      );
    }
    if (upload.bytes.byteLength > this.deps.maxUploadBytes) {
      throw new TooLargeError(
        `'${filename}' is ${upload.bytes.byteLength} bytes, over the ${this.deps.maxUploadBytes} one upload may carry: ask for a presigned upload URL instead (POST the documents route with JSON {"filename", "content_type"})`,
      );
    }
    const { record, previous } = await writeVersion(
      this.deps,
      tenant,
      kb,
      documentId,
      async (version, existing) => {
        const ref = await this.deps.blobs.put(
          documentBlobPrefix(tenant, kb, documentId, version),
          upload.bytes,
          contentType,
        );
        return {
          filename,
          content_type: contentType,
          size: ref.size,
          sha256: ref.sha256,
          upload: "multipart",
          version,
          chunks: existing?.chunks ?? 0,
        };
      },
    );
    if (previous)
      await this.deps.blobs.deletePrefix(documentBlobPrefix(tenant, kb, documentId, previous));
    return record;
  }

  /**
   * A presigned document whose object has arrived: queue its ingest, once (the
   * conditional update lets one reader do it). One still waiting past its URL's
   * life, or bigger than allowed, fails with the reason. Any other record is
   * answered as it is.
   */
  async arrival(record: DocumentRecord): Promise<DocumentRecord> {
    const uploads = this.deps.uploads;
    if (record.upload !== "presigned" || record.status !== "pending" || !uploads) return record;
    const size = await uploads.size(uploadKey(record));
    const { tenant_id: tenant, knowledge_base: kb, document_id: documentId } = record;
    const condition = { exists: true, equals: { version: record.version, upload: "presigned" } };
    const max = this.deps.maxPresignedBytes ?? MAX_PRESIGNED_BYTES;
    let changes: Array<[string[], unknown]>;
    if (size === null) {
      const waited = this.deps.clock.now() - Date.parse(record.updated_at);
      if (waited <= (UPLOAD_URL_SECONDS + 600) * 1000) return record;
      changes = [
        [["status"], "failed"],
        [
          ["error"],
          {
            code: "upload_not_received",
            message: "nothing was PUT to the upload URL before it expired: ask for a new one",
          },
        ],
      ];
    } else if (size > max) {
      changes = [
        [["status"], "failed"],
        [["size"], size],
        [
          ["error"],
          {
            code: "too_large",
            message: `the upload is ${size} bytes, over the ${max} a document may have: split it`,
          },
        ],
      ];
    } else {
      changes = [
        [["upload"], "received"],
        [["size"], size],
      ];
    }
    let updated: DocumentRecord;
    try {
      updated = (await this.deps.knowledge.updateDocument(
        tenant,
        kb,
        documentId,
        { set: [...changes, [["updated_at"], new Date(this.deps.clock.now()).toISOString()]] },
        condition,
      )) as DocumentRecord;
    } catch (error) {
      if (isErrorKind(error, "conflict"))
        return (
          ((await this.deps.knowledge.getDocument(
            tenant,
            kb,
            documentId,
          )) as DocumentRecord | null) ?? record
        );
      throw error;
    }
    if (updated.upload === "received") await this.#enqueue(record);
    return updated;
  }

  async #enqueue(record: DocumentRecord): Promise<void> {
    await sendIngest(this.deps.queue, {
      v: 1,
      kind: "ingest",
      op: "ingest",
      tenant_id: record.tenant_id,
      knowledge_base: record.knowledge_base,
      document_id: record.document_id,
      version: record.version,
    });
  }
}
