/**
 * What `knowledge_add` asks of knowledge: a plan's text written as a document of
 * a knowledge base the namespace allows, and ingested at once (the same ingest
 * an upload gets, within the same limits: the upload's size, the tenant's
 * month), so that the next task's `vector_search` finds it. Runs where ingest
 * runs (the knowledge function on AWS, in process locally).
 *
 * Idempotent by its document id, which the tool derives from the step's
 * idempotency key: a redelivered step finds the document it wrote (ready: the
 * same chunks are answered, nothing is written or charged again; left pending
 * by a crash: its ingest is run again, which `replaceDocument` makes exact).
 */
import { isErrorKind, StackVMError } from "../errors";
import { sha256Hex } from "../ids";
import type { LlmCall } from "../model";
import { allowedBases, type SearchScope } from "./allowed-bases";
import type { IngestService } from "./ingest";
import { documentChunks } from "./ingest-read";
import type { KnowledgeService } from "./knowledge-service";
import type { IngestUsage } from "./model";
import { type DocumentRecord, ZERO_INGEST_USAGE } from "./records";

/** What a plan writes: its text, a title to show as the document's name, and the document's id. */
export interface MemoryInput {
  text: string;
  title?: string | undefined;
  documentId: string;
}

/** What was written: the document and its chunks, as a later `vector_search` returns them. */
export interface MemoryWritten {
  knowledge_base: string;
  document_id: string;
  filename: string;
  /** False when a redelivered step found the document it had written already. */
  created: boolean;
  chunks: Array<{ chunk_id: string; position: number; text: string }>;
  /** What the ingest spent (charged to the tenant's month, as an upload's ingest is). */
  usage: IngestUsage;
  /** Left empty: the ingest's calls count in the tenant's month, not on the step's ledger. */
  calls: LlmCall[];
}

export interface KnowledgeMemoryDeps {
  knowledge: Pick<KnowledgeService, "searchable" | "store" | "documentRecord">;
  ingest: Pick<IngestService, "handle">;
}

export class KnowledgeMemory {
  constructor(private readonly deps: KnowledgeMemoryDeps) {}

  /** Writes the text as a document of the knowledge base the scope names (or its only one) and ingests it. */
  async add(scope: SearchScope, input: MemoryInput): Promise<MemoryWritten> {
    const kb = await this.#target(scope);
    const bytes = new TextEncoder().encode(input.text);
    const filename = `${slug(input.title) || input.documentId}.md`;
    let record = await this.deps.knowledge.documentRecord(scope.tenant, kb, input.documentId);
    const created = record === null;
    if (record === null) {
      record = await this.#store(scope.tenant, kb, input.documentId, filename, bytes);
    } else if (record.sha256 !== sha256Hex(bytes)) {
      throw new StackVMError(
        "step",
        "memory_id_reused",
        `document '${input.documentId}' of '${kb}' holds other text than this step's: a step writes one memory; add another in a step of its own`,
      );
    }
    if (record.status === "pending" || record.status === "ingesting") {
      await this.deps.ingest.handle({
        v: 1,
        kind: "ingest",
        op: "ingest",
        tenant_id: scope.tenant,
        knowledge_base: kb,
        document_id: input.documentId,
        version: record.version,
      });
      const after = await this.deps.knowledge.documentRecord(scope.tenant, kb, input.documentId);
      if (!after) {
        throw new StackVMError(
          "step",
          "document_deleted",
          `knowledge_add: document '${input.documentId}' of '${kb}' was deleted while it was added`,
        );
      }
      record = after;
    }
    return this.#answer(record, bytes, created);
  }

  /**
   * Writes the document; one a copy of this step running beside it wrote first
   * (the conditional write refused this one) is read back and carried on with.
   */
  async #store(
    tenant: string,
    kb: string,
    documentId: string,
    filename: string,
    bytes: Uint8Array,
  ): Promise<DocumentRecord> {
    try {
      return await this.deps.knowledge.store(tenant, kb, {
        filename,
        contentType: "text/markdown",
        bytes,
        documentId,
      });
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      const written = await this.deps.knowledge.documentRecord(tenant, kb, documentId);
      if (!written) throw error;
      return written;
    }
  }

  async #answer(record: DocumentRecord, bytes: Uint8Array, created: boolean) {
    if (record.status !== "ready") {
      const error = record.error ?? { code: "ingest_failed", message: "the ingest did not finish" };
      throw new StackVMError("step", error.code, `knowledge_add: ${error.message}`);
    }
    const hash = sha256Hex(bytes).slice(0, 8);
    const chunks = await documentChunks(bytes, record);
    return {
      knowledge_base: record.knowledge_base,
      document_id: record.document_id,
      filename: record.filename,
      created,
      chunks: chunks.map((c) => ({
        chunk_id: `${record.document_id}:${hash}:${c.position}`,
        position: c.position,
        text: c.text,
      })),
      usage: record.usage ?? ZERO_INGEST_USAGE,
      calls: [],
    };
  }

  /** The one knowledge base written to: the one asked for if the namespace allows it, else the only one it allows. */
  async #target(scope: SearchScope): Promise<string> {
    const bases = await this.deps.knowledge.searchable(
      scope.tenant,
      allowedBases(scope),
      scope.knowledgeBase,
    );
    if (bases.length === 1) return bases[0]!;
    throw new StackVMError(
      "step",
      "knowledge_base_required",
      bases.length === 0
        ? "this namespace allows no knowledge base to write to: create one (POST /v1/knowledge-bases) and list it in the namespace's knowledge_bases"
        : `name the knowledge base to add to with knowledge_base: this task may write to ${bases.join(", ")}`,
    );
  }
}

/** A title as a file name: lower case, a-z0-9 and dashes, at most 60 characters. */
function slug(title: string | undefined): string {
  return (title ?? "")
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
}
