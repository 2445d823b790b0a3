/**
 * Ingest of one document, as the worker runs it for an `ingest` queue message:
 * read the original, extract its text, chunk it (`ingest-read.ts`), extract each
 * chunk's entities and relationships (one `knowledge_graph` LLM call per chunk,
 * `graph-extract.ts`), embed chunks and entities (`index-rows.ts`), and make the
 * document's rows in the index exactly those. The month's budget bounds and is
 * charged for it (`ingest-budget.ts`); the document shows each stage
 * (`ingest-status.ts`).
 *
 * Idempotent: a message for an older version, or for a version already `ready`
 * or `failed`, does nothing; a redelivery after a crash mid-ingest starts over and
 * `replaceDocument` leaves the same rows. A document deleted while its ingest runs
 * is checked for after the write, and its rows removed again. A document that
 * cannot be read fails with its reason; a transient failure (the embedding server
 * down) is rethrown so the message comes back, and on the last delivery is
 * recorded as the document's error instead.
 */
import { isErrorKind, StackVMError } from "../errors";
import { sha256Hex } from "../ids";
import type { BudgetLeft, LlmBudget, LlmSession } from "../llm/types";
import type { LlmCall } from "../model";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { DocumentUploads } from "../ports/uploads";
import type { KnowledgeStore } from "../store/knowledge-store";
import type { Chunk } from "./chunk";
import type { Embedder } from "./embedder";
import { saveCheckpoint } from "./graph-checkpoint";
import { extractGraphs } from "./graph-extract";
import type { IndexRow, KnowledgeIndex } from "./index-port";
import { indexRows } from "./index-rows";
import { budgetLeft, checkSpent, type IngestBudget, ingestUsage } from "./ingest-budget";
import { documentChunks, readOriginal } from "./ingest-read";
import { type IngestResult, writeProgress, writeResult } from "./ingest-status";
import type { IngestMessage } from "./model";
import type { PdfLimits } from "./pdf-text";
import { type DocumentRecord, MAX_PRESIGNED_BYTES } from "./records";

/** The ports and limits an ingest runs with. */
export interface IngestDeps {
  knowledge: KnowledgeStore;
  blobs: Blobs;
  /** Where presigned uploads land; none: only multipart documents are read. */
  uploads?: DocumentUploads;
  clock: Clock;
  index: KnowledgeIndex;
  embedder: Embedder;
  /** A session for the graph calls of one ingest, within what the tenant's month has left. */
  llm: (budget: LlmBudget) => LlmSession;
  /** The tenant's monthly budget: what an ingest may spend, and where it counts; none: no limit. */
  budget?: IngestBudget;
  log: Log;
  /** Graph extractions in flight at once. */
  graphConcurrency?: number;
  /** The largest presigned upload (100 MiB unless set); the read stops past it. */
  maxPresignedBytes?: number;
  /** What reading one PDF may take (memory, time, pages, characters). */
  pdfLimits?: PdfLimits;
}

/** What handling one ingest message came to. */
export type IngestOutcome = "ready" | "failed" | "stale" | "duplicate" | "deleted";

/** Runs the ingest queue's messages: ingests, document deletes and knowledge-base drops. */
export class IngestService {
  constructor(private readonly deps: IngestDeps) {}

  /**
   * Ingests the document of the message.
   *
   * @param lastAttempt true on the last delivery before the DLQ: a transient
   *   failure is then recorded on the document instead of rethrown.
   */
  async handle(message: IngestMessage, lastAttempt = false): Promise<IngestOutcome> {
    if (message.op === "delete") {
      await this.deps.index.deleteDocument(
        message.tenant_id,
        message.knowledge_base,
        message.document_id,
      );
      return "deleted";
    }
    if (message.op === "drop") {
      await this.deps.index.dropKnowledgeBase(message.tenant_id, message.knowledge_base);
      return "deleted";
    }
    const { tenant_id: tenant, knowledge_base: kb, document_id: documentId, version } = message;
    const record = (await this.deps.knowledge.getDocument(
      tenant,
      kb,
      documentId,
    )) as DocumentRecord | null;
    if (!record) return "deleted";
    if (record.version !== version) return "stale";
    if (record.status === "ready" || record.status === "failed") return "duplicate";
    const calls: LlmCall[] = [];
    try {
      const left = await budgetLeft(this.deps.budget, tenant);
      await writeProgress(this.deps, record, "extract", 0, 1);
      const bytes = await readOriginal(
        this.deps,
        record,
        this.deps.maxPresignedBytes ?? MAX_PRESIGNED_BYTES,
      );
      const chunks = await documentChunks(bytes, record, this.deps.pdfLimits);
      // Chunk ids carry the content's hash: the same bytes give the same ids on every ingest.
      const rows = await this.#rows(record, sha256Hex(bytes).slice(0, 8), chunks, calls, left);
      await writeProgress(this.deps, record, "index", 0, rows.length);
      await this.deps.index.replaceDocument(tenant, kb, documentId, rows);
      const after = (await this.deps.knowledge.getDocument(
        tenant,
        kb,
        documentId,
      )) as DocumentRecord | null;
      if (!after) {
        await this.deps.index.deleteDocument(tenant, kb, documentId);
        return "deleted";
      }
      if (after.version !== version) return "stale";
      await this.#finish(record, { status: "ready", chunks: chunks.length, error: null }, calls);
      return "ready";
    } catch (error) {
      const permanent =
        error instanceof StackVMError &&
        (error.kind === "invalid" ||
          error.kind === "step" ||
          error.kind === "malformed" ||
          error.code === "budget_exceeded");
      if (!permanent && !lastAttempt) throw error;
      const code = error instanceof StackVMError ? error.code : "ingest_failed";
      const reason = (error as Error).message;
      this.deps.log.warn("document ingest failed", {
        tenant_id: tenant,
        knowledge_base: kb,
        document_id: documentId,
        code,
        error: reason,
      });
      await this.#finish(
        record,
        { status: "failed", chunks: 0, error: { code, message: reason } },
        calls,
      ).catch((e: unknown) => {
        if (!isErrorKind(e, "conflict")) throw e;
      });
      return "failed";
    }
  }

  /** Chunk rows and entity rows, with their vectors. */
  async #rows(
    record: DocumentRecord,
    hash: string,
    chunks: Chunk[],
    calls: LlmCall[],
    left: BudgetLeft,
  ): Promise<IndexRow[]> {
    const progress = (stage: string, done: number, total: number) =>
      writeProgress(this.deps, record, stage, done, total);
    const graphs = await extractGraphs(
      { ...this.deps, progress },
      record,
      hash,
      chunks,
      calls,
      left,
    );
    checkSpent(left, calls);
    await progress("embed", 0, chunks.length);
    const { rows, texts } = indexRows(record, hash, chunks, graphs);
    let embedded: Awaited<ReturnType<Embedder["embed"]>>;
    try {
      embedded = await this.deps.embedder.embed(texts);
    } catch (error) {
      // Tried again from the queue: the graphs are had, and are not asked for again.
      if (isErrorKind(error, "retryable")) {
        await saveCheckpoint(this.deps, record, hash, { graphs, calls: [...calls] }).catch(
          () => undefined,
        );
      }
      throw error;
    }
    calls.push(...embedded.calls);
    return rows.map((row, i) => ({ ...row, vector: embedded.vectors[i]! }));
  }

  /** Writes the outcome and its usage on the document, then charges the month with it. */
  async #finish(record: DocumentRecord, result: IngestResult, calls: LlmCall[]): Promise<void> {
    const usage = ingestUsage(calls);
    await writeResult(this.deps, record, result, usage);
    await this.deps.budget?.record(record.tenant_id, {
      tokens: usage.input_tokens + usage.output_tokens,
      cost_usd: usage.cost_usd,
    });
  }
}
