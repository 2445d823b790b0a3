/**
 * Knowledge bases and their documents: create, list, read and delete them, take
 * an upload (`upload-intake.ts`: the original into the blobs, a `pending`
 * record, one ingest message), delete a document with its chunks, and say which
 * knowledge bases a namespace's plans may search. Everything is checked before
 * anything is written, so a refused upload leaves nothing behind.
 */
import {
  ConflictError,
  isErrorKind,
  NotFoundError,
  StackVMError,
  ValidationError,
} from "../errors";
import { sendIngest } from "./ingest-queue";
import {
  DocumentId,
  type KnowledgeBase,
  KnowledgeBaseInput,
  KnowledgeBaseName,
  type KnowledgeDocument,
} from "./model";
import { type DocumentRecord, documentBlobPrefix, kbBlobPrefix, presentDocument } from "./records";
import type { Upload } from "./upload-input";
import { UploadIntake, type UploadIntakeDeps } from "./upload-intake";

/** The ports and limits of the knowledge service: those of its uploads, and one more. */
export interface KnowledgeServiceDeps extends UploadIntakeDeps {
  /** False when no embedding endpoint is configured: an upload, which could never be indexed, is refused. */
  embeddingsConfigured?: boolean;
}

/** The knowledge bases and documents of every tenant. */
export class KnowledgeService {
  readonly #intake: UploadIntake;

  constructor(private readonly deps: KnowledgeServiceDeps) {
    this.#intake = new UploadIntake(deps);
  }

  /** Creates a knowledge base; `knowledge_base_exists` when the name is taken. */
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

  /** The tenant's knowledge bases, with their document and chunk counts. */
  async list(tenant: string): Promise<KnowledgeBase[]> {
    const bases = await this.deps.knowledge.listBases(tenant);
    return Promise.all(bases.map((item) => this.#present(tenant, item)));
  }

  /** One knowledge base, with its document and chunk counts. */
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
    await sendIngest(this.deps.queue, {
      v: 1,
      kind: "ingest",
      op: "drop",
      tenant_id: tenant,
      knowledge_base: name,
    });
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
    return this.#intake.presign(tenant, kb, body);
  }

  /** Takes an upload: stores the original, writes a `pending` document, queues its ingest. */
  async upload(tenant: string, kb: string, upload: Upload): Promise<KnowledgeDocument> {
    await this.#kb(tenant, kb);
    this.requireEmbeddings();
    return this.#intake.upload(tenant, kb, upload);
  }

  /**
   * Stores a document its caller ingests at once, with no ingest queued
   * (`knowledge_add` does, in its step): an upload's checks, before anything
   * is written.
   */
  async store(tenant: string, kb: string, upload: Upload): Promise<DocumentRecord> {
    await this.#kb(tenant, kb);
    this.requireEmbeddings();
    return this.#intake.store(tenant, kb, upload);
  }

  /** The stored record of a document, or null (no knowledge base check: the caller made one). */
  async documentRecord(
    tenant: string,
    kb: string,
    documentId: string,
  ): Promise<DocumentRecord | null> {
    return (await this.deps.knowledge.getDocument(tenant, kb, documentId)) as DocumentRecord | null;
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

  /** A page of the knowledge base's documents; presigned ones whose object arrived are queued. */
  async listDocuments(
    tenant: string,
    kb: string,
    cursor: string | null,
    limit = 100,
  ): Promise<{ documents: KnowledgeDocument[]; next_cursor: string | null }> {
    await this.#kb(tenant, kb);
    const page = await this.deps.knowledge.documentsPage(tenant, kb, limit, cursor);
    const records = await Promise.all(
      page.items.map((item) => this.#intake.arrival(item as DocumentRecord)),
    );
    return { documents: records.map(presentDocument), next_cursor: page.cursor };
  }

  /** One document; a presigned one whose object arrived is queued. */
  async getDocument(tenant: string, kb: string, documentId: string): Promise<KnowledgeDocument> {
    return presentDocument(
      await this.#intake.arrival(await this.#document(tenant, kb, documentId)),
    );
  }

  /** Deletes the document, its original and its chunks. */
  async deleteDocument(tenant: string, kb: string, documentId: string): Promise<void> {
    await this.#document(tenant, kb, documentId);
    await this.deps.knowledge.deleteDocument(tenant, kb, documentId);
    await this.deps.blobs.deletePrefix(documentBlobPrefix(tenant, kb, documentId));
    // The rows go in the knowledge base's message group, after any ingest queued before.
    await sendIngest(this.deps.queue, {
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
