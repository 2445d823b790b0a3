/**
 * Knowledge bases and their documents: create, list, read and delete them, take
 * an upload (the original into the blobs, a `pending` record, one ingest message),
 * and delete a document with its chunks. Everything is checked before anything is
 * written, so a refused upload leaves nothing behind.
 */
import * as z from "zod";
import {
  ConflictError,
  isErrorKind,
  NotFoundError,
  StackVMError,
  TooLargeError,
  ValidationError,
} from "../errors";
import { randomId } from "../ids";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import type { DocumentUploads } from "../ports/uploads";
import { documentKey } from "../store/keys";
import type { KnowledgeStore } from "../store/knowledge-store";
import { type DOCUMENT_TYPES, documentType, SUPPORTED_TYPES } from "./extract";
import {
  DocumentId,
  type IngestMessage,
  type KnowledgeBase,
  KnowledgeBaseInput,
  KnowledgeBaseName,
  type KnowledgeDocument,
} from "./model";
import {
  type DocumentRecord,
  documentBlobPrefix,
  ingestGroup,
  kbBlobPrefix,
  MAX_PRESIGNED_BYTES,
  presentDocument,
  uploadKey,
  ZERO_INGEST_USAGE,
} from "./records";

export interface KnowledgeServiceDeps {
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
  /** False when no embedding endpoint is configured: an upload, which could never be indexed, is refused. */
  embeddingsConfigured?: boolean;
}

/** How long a presigned upload URL is valid. */
export const UPLOAD_URL_SECONDS = 3600;

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

/** The knowledge bases and documents of every tenant. */
export class KnowledgeService {
  constructor(private readonly deps: KnowledgeServiceDeps) {}

  async create(tenant: string, body: unknown): Promise<KnowledgeBase> {
    const input = KnowledgeBaseInput.parse(body);
    const now = this.#now();
    try {
      await this.deps.knowledge.createBase(tenant, input.name, {
        name: input.name,
        description: input.description,
        created_at: now,
      });
    } catch (error) {
      if (isErrorKind(error, "conflict")) {
        throw new ConflictError(
          `knowledge base '${input.name}' exists: pick another name, or DELETE it first`,
          "knowledge_base_exists",
        );
      }
      throw error;
    }
    return {
      name: input.name,
      description: input.description,
      documents: 0,
      chunks: 0,
      created_at: now,
    };
  }

  async list(tenant: string): Promise<KnowledgeBase[]> {
    const bases = await this.deps.knowledge.listBases(tenant);
    return Promise.all(bases.map((item) => this.#present(tenant, item)));
  }

  async get(tenant: string, name: string): Promise<KnowledgeBase> {
    return this.#present(tenant, await this.#kb(tenant, name));
  }

  /** Deletes the knowledge base, its documents, their originals and its index table. */
  async delete(tenant: string, name: string): Promise<void> {
    await this.#kb(tenant, name);
    const records = await this.#allDocuments(tenant, name);
    const ids = records.map((r) => r.document_id);
    await this.deps.knowledge.deleteBase(tenant, name, ids);
    await this.deps.blobs.deletePrefix(kbBlobPrefix(tenant, name));
    // Only the worker writes the index, in the knowledge base's message group.
    await this.#send({ v: 1, kind: "ingest", op: "drop", tenant_id: tenant, knowledge_base: name });
  }

  /**
   * Answers a presigned upload URL for a large document: a `pending` document
   * whose ingest is queued when its object has arrived (the first read of the
   * document after the PUT sees it).
   */
  async presign(
    tenant: string,
    kb: string,
    body: unknown,
  ): Promise<{ document: KnowledgeDocument; upload_url: string; expires_in: number }> {
    await this.#kb(tenant, kb);
    this.requireEmbeddings();
    const input = PresignInput.parse(body);
    const uploads = this.deps.uploads;
    if (!uploads) {
      throw new StackVMError(
        "forbidden",
        "presigned_uploads_unavailable",
        "presigned uploads are not configured here: upload the file as multipart/form-data",
      );
    }
    const documentId = input.document_id ?? `doc_${randomId(16)}`;
    const filename = checkFilename(input.filename);
    const contentType = readableType(input.content_type, filename);
    const { record, previous } = await this.#write(tenant, kb, documentId, (version, existing) => ({
      filename,
      content_type: contentType,
      size: 0,
      sha256: "",
      upload: "presigned",
      version,
      chunks: existing?.chunks ?? 0,
    }));
    if (previous)
      await this.deps.blobs.deletePrefix(documentBlobPrefix(tenant, kb, documentId, previous));
    const url = await uploads.presignPut(uploadKey(record), contentType, UPLOAD_URL_SECONDS);
    return { document: presentDocument(record), upload_url: url, expires_in: UPLOAD_URL_SECONDS };
  }

  /** Takes an upload: stores the original, writes a `pending` document, queues its ingest. */
  async upload(tenant: string, kb: string, upload: Upload): Promise<KnowledgeDocument> {
    await this.#kb(tenant, kb);
    this.requireEmbeddings();
    const documentId =
      upload.documentId === undefined ? `doc_${randomId(16)}` : parseDocumentId(upload.documentId);
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
    const { record, previous } = await this.#write(
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
    const version = record.version;
    await this.#enqueue(tenant, kb, documentId, version);
    return presentDocument(record);
  }

  /**
   * Refuses a document that could never be indexed, naming what to set, locally
   * and on AWS (where the API function learns it from STACKVM_EMBEDDINGS_CONFIGURED).
   */
  requireEmbeddings(): void {
    if (this.deps.embeddingsConfigured !== false) return;
    throw new ValidationError(
      "embeddings_not_configured",
      "no embedding endpoint is configured, so a document could never be indexed: set OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama with EMBEDDING_MODEL=nomic-embed-text) or OPENAI_API_KEY (OpenAI), or EMBEDDING_PROVIDER=bedrock, then restart and upload again (on AWS: npx sst secret set OpenaiApiKey, OpenaiBaseUrl or LlmProvider bedrock, then deploy)",
    );
  }

  async listDocuments(
    tenant: string,
    kb: string,
    cursor: string | null,
    limit = 100,
  ): Promise<{ documents: KnowledgeDocument[]; next_cursor: string | null }> {
    await this.#kb(tenant, kb);
    const page = await this.deps.knowledge.documentsPage(tenant, kb, limit, cursor);
    const records = await Promise.all(
      page.items.map((item) => this.#arrival(item as DocumentRecord)),
    );
    return { documents: records.map(presentDocument), next_cursor: page.cursor };
  }

  async getDocument(tenant: string, kb: string, documentId: string): Promise<KnowledgeDocument> {
    return presentDocument(await this.#arrival(await this.#document(tenant, kb, documentId)));
  }

  /** Deletes the document, its original and its chunks. */
  async deleteDocument(tenant: string, kb: string, documentId: string): Promise<void> {
    await this.#document(tenant, kb, documentId);
    await this.deps.knowledge.deleteDocument(tenant, kb, documentId);
    await this.deps.blobs.deletePrefix(documentBlobPrefix(tenant, kb, documentId));
    // The rows go in the knowledge base's message group, after any ingest queued before.
    await this.#send({
      v: 1,
      kind: "ingest",
      op: "delete",
      tenant_id: tenant,
      knowledge_base: kb,
      document_id: documentId,
    });
  }

  /**
   * Which knowledge bases a namespace's plans may search: the one asked for, if
   * allowed and existing, else all the namespace allows. `default`, unless its
   * stored config names some, allows all of the tenant's.
   */
  async searchable(
    tenant: string,
    allowed: readonly string[] | undefined,
    requested?: string,
  ): Promise<string[]> {
    const existing = await this.deps.knowledge.baseNames(tenant);
    const permitted =
      allowed === undefined ? existing : existing.filter((name) => allowed.includes(name));
    if (requested === undefined) return permitted;
    if (!permitted.includes(requested)) {
      const known = permitted.length ? permitted.join(", ") : "none";
      throw new StackVMError(
        "step",
        "knowledge_base_unavailable",
        `knowledge base '${requested}' ${existing.includes(requested) ? "is not allowed in this namespace" : "does not exist"}: this task may search ${known}`,
      );
    }
    return [requested];
  }

  /**
   * Writes version n+1 of a document as `pending`, on condition that version n
   * is still the latest (of two uploads racing to replace one document, one
   * wins). Answers the record and the version it replaced.
   */
  async #write(
    tenant: string,
    kb: string,
    documentId: string,
    fields: (
      version: number,
      existing: DocumentRecord | null,
    ) =>
      | Pick<
          DocumentRecord,
          "filename" | "content_type" | "size" | "sha256" | "upload" | "version" | "chunks"
        >
      | Promise<
          Pick<
            DocumentRecord,
            "filename" | "content_type" | "size" | "sha256" | "upload" | "version" | "chunks"
          >
        >,
  ): Promise<{ record: DocumentRecord; previous: number | null }> {
    const key = documentKey(tenant, kb, documentId);
    const existing = (await this.deps.knowledge.getDocument(
      tenant,
      kb,
      documentId,
    )) as DocumentRecord | null;
    const version = (existing?.version ?? 0) + 1;
    const now = this.#now();
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
      await this.deps.knowledge.putDocument(
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

  /**
   * A presigned document whose object has arrived: queue its ingest, once (the
   * conditional update lets one reader do it). One still waiting past its URL's
   * life, or bigger than allowed, fails with the reason.
   */
  async #arrival(record: DocumentRecord): Promise<DocumentRecord> {
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
        { set: [...changes, [["updated_at"], this.#now()]] },
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
    if (updated.upload === "received") {
      await this.#enqueue(
        record.tenant_id,
        record.knowledge_base,
        record.document_id,
        record.version,
      );
    }
    return updated;
  }

  async #enqueue(tenant: string, kb: string, documentId: string, version: number): Promise<void> {
    await this.#send({
      v: 1,
      kind: "ingest",
      op: "ingest",
      tenant_id: tenant,
      knowledge_base: kb,
      document_id: documentId,
      version,
    });
  }

  /** Each send is its own: a document deleted and uploaded again within minutes must not be deduplicated away. */
  async #send(message: IngestMessage): Promise<void> {
    await this.deps.queue.send(message, {
      groupId: ingestGroup(message.tenant_id, message.knowledge_base),
      deduplicationId: `kb#${message.op}#${randomId(24)}`,
    });
  }

  async #kb(tenant: string, name: string) {
    if (!KnowledgeBaseName.safeParse(name).success) throw new NotFoundError("knowledge base", name);
    const item = await this.deps.knowledge.getBase(tenant, name);
    if (!item) throw new NotFoundError("knowledge base", name);
    return item;
  }

  async #document(tenant: string, kb: string, documentId: string): Promise<DocumentRecord> {
    await this.#kb(tenant, kb);
    if (!DocumentId.safeParse(documentId).success) throw new NotFoundError("document", documentId);
    const record = (await this.deps.knowledge.getDocument(
      tenant,
      kb,
      documentId,
    )) as DocumentRecord | null;
    if (!record) throw new NotFoundError("document", documentId);
    return record;
  }

  async #allDocuments(tenant: string, kb: string): Promise<DocumentRecord[]> {
    return (await this.deps.knowledge.allDocuments(tenant, kb)) as DocumentRecord[];
  }

  async #present(tenant: string, item: Record<string, unknown>): Promise<KnowledgeBase> {
    const name = item.name as string;
    const documents = await this.#allDocuments(tenant, name);
    return {
      name,
      description: (item.description as string) ?? "",
      documents: documents.length,
      chunks: documents.reduce((sum, d) => sum + (d.status === "ready" ? d.chunks : 0), 0),
      created_at: item.created_at as string,
    };
  }

  #now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

function parseDocumentId(id: string): string {
  const parsed = DocumentId.safeParse(id);
  if (!parsed.success)
    throw new ValidationError(
      "invalid_document_id",
      `document_id '${id.slice(0, 80)}': ${parsed.error.issues[0]?.message}`,
    );
  return parsed.data;
}

/** A file name as shown back: no path, no control characters, at most 255 characters. */
function checkFilename(name: string): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (clean === "" || clean === "." || clean === "..") {
    throw new ValidationError(
      "invalid_filename",
      'the file part has no file name: send it as filename="notes.md" in its Content-Disposition',
    );
  }
  return clean.slice(0, 255);
}

/** The content type a document is read as, or a 422 that lists the ones ingestion reads. */
function readableType(declared: string | undefined, filename: string): keyof typeof DOCUMENT_TYPES {
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
