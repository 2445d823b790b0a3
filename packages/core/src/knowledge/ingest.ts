/**
 * Ingest of one document, as the worker runs it for an `ingest` queue message:
 * read the original, extract its text, chunk it, extract each chunk's entities
 * and relationships (one `knowledge_graph` LLM call per chunk), embed chunks and
 * entities, and make the document's rows in the index exactly those.
 *
 * Idempotent: a message for an older version, or for a version already `ready`
 * or `failed`, does nothing; a redelivery after a crash mid-ingest starts over and
 * `replaceDocument` leaves the same rows. A document deleted while its ingest runs
 * is checked for after the write, and its rows removed again. A document that
 * cannot be read fails with its reason; a transient failure (the embedding server
 * down) is rethrown so the message comes back, and on the last delivery is
 * recorded as the document's error instead.
 */
import { BudgetExceededError, isErrorKind, StackVMError } from "../errors";
import { sha256Hex } from "../ids";
import type { BudgetLeft, LlmBudget, LlmSession } from "../llm/types";
import type { LlmCall } from "../model";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { DocumentUploads } from "../ports/uploads";
import type { KnowledgeStore } from "../store/knowledge-store";
import { type Chunk, chunkText } from "./chunk";
import type { Embedder } from "./embedder";
import { type DOCUMENT_TYPES, ExtractError, extractText } from "./extract";
import type { IndexRow, KnowledgeIndex } from "./index-port";
import { type IngestMessage, type IngestUsage, KnowledgeGraph, normalizeEntityName } from "./model";
import type { PdfLimits } from "./pdf-text";
import { type DocumentRecord, documentBlobPrefix, MAX_PRESIGNED_BYTES, uploadKey } from "./records";

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

export type IngestOutcome = "ready" | "failed" | "stale" | "duplicate" | "deleted";

/** The month's budget of a tenant, as ingest uses it (`QuotaService`). */
export interface IngestBudget {
  /** What is left; throws `RateLimitedError` (`monthly_budget_exhausted`) when nothing is. */
  left(tenant: string): Promise<BudgetLeft>;
  /** Adds an ingest's tokens and cost to the month. */
  record(tenant: string, usage: { tokens: number; cost_usd: number }): Promise<void>;
}

export class IngestService {
  constructor(private readonly deps: IngestDeps) {}

  get #maxPresigned(): number {
    return this.deps.maxPresignedBytes ?? MAX_PRESIGNED_BYTES;
  }

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
      const left = await this.#budgetLeft(tenant);
      await this.#progress(record, "extract", 0, 1);
      const bytes =
        record.upload === "multipart"
          ? await this.deps.blobs.get(
              documentBlobPrefix(tenant, kb, documentId, version),
              record.sha256,
            )
          : ((await this.deps.uploads?.get(uploadKey(record), this.#maxPresigned)) ?? null);
      if (bytes === null)
        throw new ExtractError(
          "original_missing",
          "the uploaded original is gone from storage: upload the document again",
        );
      if (record.upload !== "multipart" && bytes.byteLength > this.#maxPresigned) {
        // PUT again through the same URL, bigger, after its size was checked on arrival.
        throw new ExtractError(
          "too_large",
          `the upload is now over the ${this.#maxPresigned} bytes a document may have (it was replaced after it arrived): split it, and upload it again`,
        );
      }
      const text = await extractText(
        bytes,
        record.content_type as keyof typeof DOCUMENT_TYPES,
        this.deps.pdfLimits,
      );
      let chunks: Chunk[];
      try {
        chunks = chunkText(text);
      } catch (error) {
        throw new ExtractError("too_many_chunks", (error as Error).message);
      }
      // Chunk ids carry the content's hash: the same bytes give the same ids on every ingest.
      const rows = await this.#rows(record, sha256Hex(bytes).slice(0, 8), chunks, calls, left);
      await this.#progress(record, "index", 0, rows.length);
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
    const graphs = await this.#graphs(record, hash, chunks, calls, left);
    checkSpent(left, calls);
    await this.#progress(record, "embed", 0, chunks.length);
    const chunkIds = chunks.map((c) => `${record.document_id}:${hash}:${c.position}`);
    const entityRows: Array<Omit<IndexRow, "vector">> = [];
    chunks.forEach((chunk, i) => {
      graphs[i]!.entities.forEach((entity, n) => {
        entityRows.push({
          kind: "entity",
          id: `${chunkIds[i]}:e${n}`,
          document_id: record.document_id,
          filename: record.filename,
          position: chunk.position,
          text: `${entity.name}: ${entity.description}`,
          data: JSON.stringify({
            name: entity.name,
            key: normalizeEntityName(entity.name),
            description: entity.description,
            chunk_id: chunkIds[i],
          }),
        });
      });
    });
    const texts = [
      ...chunks.map((c) => (c.heading ? `${c.heading}\n${c.text}` : c.text)),
      ...entityRows.map((r) => r.text),
    ];
    let embedded: Awaited<ReturnType<Embedder["embed"]>>;
    try {
      embedded = await this.deps.embedder.embed(texts);
    } catch (error) {
      // Tried again from the queue: the graphs are had, and are not asked for again.
      if (isErrorKind(error, "retryable")) {
        await this.#saveCheckpoint(record, hash, graphs, [...calls]).catch(() => undefined);
      }
      throw error;
    }
    calls.push(...embedded.calls);
    const rows: IndexRow[] = chunks.map((chunk, i) => ({
      kind: "chunk",
      id: chunkIds[i]!,
      document_id: record.document_id,
      filename: record.filename,
      position: chunk.position,
      text: chunk.text,
      data: JSON.stringify({ heading: chunk.heading, ...graphs[i] }),
      vector: embedded.vectors[i]!,
    }));
    for (const [n, row] of entityRows.entries()) {
      rows.push({ ...row, vector: embedded.vectors[chunks.length + n]! });
    }
    return rows;
  }

  /** One `knowledge_graph` call per chunk; a chunk the model gives no valid graph for has none. */
  async #graphs(
    record: DocumentRecord,
    hash: string,
    chunks: Chunk[],
    calls: LlmCall[],
    left: BudgetLeft,
  ): Promise<KnowledgeGraph[]> {
    // A delivery before this one failed after some graphs: those are not asked again,
    // and its calls are this ingest's (the month is charged once, at the end).
    const saved = await this.#checkpoint(record, hash);
    const graphs: (KnowledgeGraph | undefined)[] = saved?.graphs ?? new Array(chunks.length);
    if (saved) calls.push(...saved.calls);
    // Said before the first call, so that a short document does not read as still extracting.
    await this.#progress(record, "graph", 0, chunks.length);
    const session = this.deps.llm({
      ...(left.tokens === undefined ? {} : { tokensLeft: left.tokens }),
      ...(left.costUsd === undefined ? {} : { costLeftUsd: left.costUsd }),
    });
    const todo = chunks.map((_, i) => i).filter((i) => graphs[i] == null);
    let next = 0;
    let done = chunks.length - todo.length;
    const worker = async () => {
      while (next < todo.length) {
        const i = todo[next++]!;
        const chunk = chunks[i]!;
        try {
          graphs[i] = await session.json({
            purpose: "knowledge_graph",
            schemaName: "knowledge_graph",
            schema: KnowledgeGraph,
            cutOffHint:
              "list only the most important entities and relationships, with shorter descriptions",
            messages: [
              { role: "system", content: GRAPH_PROMPT },
              {
                role: "user",
                content: `Document: ${record.filename}${chunk.heading ? `\nSection: ${chunk.heading}` : ""}\n\n${chunk.text}`,
              },
            ],
          });
        } catch (error) {
          // No graph for this chunk (a refused answer; no LLM configured): its text is still embedded.
          const noLlm = (error as { code?: unknown }).code === "llm_not_configured";
          if (!isErrorKind(error, "step") && !noLlm) throw error;
          graphs[i] = { entities: [], relationships: [] };
        }
        done++;
        if (done % 8 === 0) await this.#progress(record, "graph", done, chunks.length);
      }
    };
    try {
      await Promise.all(
        Array.from({ length: Math.min(this.deps.graphConcurrency ?? 4, todo.length) }, worker),
      );
    } catch (error) {
      if (isErrorKind(error, "retryable")) {
        // Tried again from the queue: keep what this delivery got, so it is not asked again.
        await this.#saveCheckpoint(record, hash, graphs, [
          ...(saved?.calls ?? []),
          ...session.calls,
        ]).catch(() => undefined);
      }
      // The session stopped at what the month had left: say so as ingest, not as a task's budget.
      // Only a spent budget: another refusal is not the month's doing, and keeps its own words.
      if (
        isErrorKind(error, "forbidden") &&
        (error as { code?: unknown }).code === "budget_exceeded"
      ) {
        throw ranOut([...calls, ...session.calls]);
      }
      throw error;
    } finally {
      calls.push(...session.calls);
    }
    return graphs as KnowledgeGraph[];
  }

  /** The graphs and calls a failed delivery of this version and content kept, if any. */
  async #checkpoint(
    record: DocumentRecord,
    hash: string,
  ): Promise<{ graphs: (KnowledgeGraph | undefined)[]; calls: LlmCall[] } | null> {
    const saved = record.graph_checkpoint;
    if (!saved || saved.hash !== hash) return null;
    const bytes = await this.deps.blobs.get(checkpointPrefix(record), saved.sha256);
    if (!bytes) return null;
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as {
      graphs: (KnowledgeGraph | null)[];
      calls: LlmCall[];
    };
    return { graphs: parsed.graphs.map((g) => g ?? undefined), calls: parsed.calls };
  }

  /** Keeps the graphs got so far and the calls made, for the next delivery (`#checkpoint`). */
  async #saveCheckpoint(
    record: DocumentRecord,
    hash: string,
    graphs: (KnowledgeGraph | undefined)[],
    calls: LlmCall[],
  ): Promise<void> {
    const body = JSON.stringify({ graphs: Array.from(graphs, (g) => g ?? null), calls });
    const ref = await this.deps.blobs.put(
      checkpointPrefix(record),
      new TextEncoder().encode(body),
      "application/json",
    );
    await this.deps.knowledge.updateDocument(
      record.tenant_id,
      record.knowledge_base,
      record.document_id,
      { set: [[["graph_checkpoint"], { hash, sha256: ref.sha256 }]] },
      { exists: true, equals: { version: record.version } },
    );
  }

  /** What the tenant's month has left; a spent month fails the document, saying so. */
  async #budgetLeft(tenant: string): Promise<BudgetLeft> {
    if (!this.deps.budget) return {};
    try {
      return await this.deps.budget.left(tenant);
    } catch (error) {
      if (!isErrorKind(error, "rate_limited")) throw error;
      throw new BudgetExceededError(
        "not ingested: the tenant's monthly budget is spent; upload the document again next month, or once the operator raises monthly_token_budget / monthly_cost_budget_usd",
      );
    }
  }

  async #progress(
    record: DocumentRecord,
    stage: string,
    done: number,
    total: number,
  ): Promise<void> {
    await this.deps.knowledge.updateDocument(
      record.tenant_id,
      record.knowledge_base,
      record.document_id,
      {
        set: [
          [["status"], "ingesting"],
          [["progress"], { stage, done, total }],
          [["updated_at"], new Date(this.deps.clock.now()).toISOString()],
        ],
      },
      { exists: true, equals: { version: record.version } },
    );
  }

  async #finish(
    record: DocumentRecord,
    result: {
      status: "ready" | "failed";
      chunks: number;
      error: { code: string; message: string } | null;
    },
    calls: LlmCall[],
  ): Promise<void> {
    const usage: IngestUsage = {
      llm_calls: calls.length,
      embedding_tokens: calls
        .filter((c) => c.purpose === "embedding")
        .reduce((n, c) => n + c.input_tokens, 0),
      input_tokens: calls.reduce((n, c) => n + c.input_tokens, 0),
      output_tokens: calls.reduce((n, c) => n + c.output_tokens, 0),
      cost_usd: calls.reduce((n, c) => n + c.cost_usd, 0),
    };
    await this.deps.knowledge.updateDocument(
      record.tenant_id,
      record.knowledge_base,
      record.document_id,
      {
        set: [
          [["status"], result.status],
          [["chunks"], result.chunks],
          [["error"], result.error],
          [
            ["progress"],
            result.status === "ready"
              ? { stage: "done", done: result.chunks, total: result.chunks }
              : null,
          ],
          [["usage"], usage],
          [["updated_at"], new Date(this.deps.clock.now()).toISOString()],
        ],
      },
      { exists: true, equals: { version: record.version } },
    );
    await this.deps.budget?.record(record.tenant_id, {
      tokens: usage.input_tokens + usage.output_tokens,
      cost_usd: usage.cost_usd,
    });
  }
}

/** Where a version's graph checkpoint is kept: beside its original. */
function checkpointPrefix(record: DocumentRecord): string {
  return documentBlobPrefix(
    record.tenant_id,
    record.knowledge_base,
    record.document_id,
    record.version,
  );
}

/** Stops an ingest whose calls spent what the month had left (checked between stages). */
function checkSpent(left: BudgetLeft, calls: LlmCall[]): void {
  const { tokens, cost } = spent(calls);
  if (
    (left.tokens !== undefined && tokens >= left.tokens) ||
    (left.costUsd !== undefined && cost >= left.costUsd)
  ) {
    throw ranOut(calls);
  }
}

const spent = (calls: LlmCall[]) => ({
  tokens: calls.reduce((n, c) => n + c.input_tokens + c.output_tokens, 0),
  cost: calls.reduce((n, c) => n + c.cost_usd, 0),
});

function ranOut(calls: LlmCall[]): BudgetExceededError {
  const { tokens, cost } = spent(calls);
  return new BudgetExceededError(
    `not ingested: the tenant's monthly budget ran out during this ingest (${tokens} tokens, $${cost.toFixed(4)} spent on it); upload the document again next month, or once the operator raises monthly_token_budget / monthly_cost_budget_usd`,
  );
}

const GRAPH_PROMPT = [
  "Extract a knowledge graph from the text the user gives.",
  "entities: the people, organizations, places, products, concepts and events the text is about, each with its name as written and a one-sentence description from the text.",
  "relationships: how two of those entities relate, as source and target names exactly as in entities, with a short description.",
  'Use only what the text says. Answer with JSON: {"entities": [{"name", "description"}], "relationships": [{"source", "target", "description"}]}.',
].join("\n");
