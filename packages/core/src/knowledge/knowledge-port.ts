/**
 * The knowledge port: what the step worker asks of knowledge, the two searches
 * behind `vector_search` and `retrieve_knowledge_graph` and one ingest message.
 * and `knowledge_add`'s write. On AWS a function of its own answers it (LanceDB and the PDF reader live
 * there, not in the worker); locally the same handler runs in process. The
 * wire form is `knowledge/protocol.ts`.
 */
import type { LlmCall } from "../model";
import type { IngestOutcome } from "./ingest";
import type { MemoryInput, MemoryWritten } from "./memory-add";
import type { ChunkHit, IngestMessage } from "./model";
import type { GraphAnswer, SearchScope } from "./search";

/** The searches the knowledge tools call (`KnowledgeSearch` is one). */
export interface KnowledgeSearchPort {
  /** The `topK` chunks nearest to the query, best first, and the embedding call it made. */
  chunks(
    scope: SearchScope,
    query: string,
    topK: number,
  ): Promise<{ chunks: ChunkHit[]; calls: LlmCall[] }>;
  /** The entities nearest to the query, their relationships and chunks. */
  graph(scope: SearchScope, query: string): Promise<GraphAnswer & { calls: LlmCall[] }>;
}

/** What `knowledge_add` writes (`KnowledgeMemory` is one). */
export interface KnowledgeAddPort {
  /** Writes the text as a document of the scope's knowledge base, ingested before it answers. */
  add(scope: SearchScope, input: MemoryInput): Promise<MemoryWritten>;
}

/** One knowledge message of the queue (`IngestService` is one). */
export interface IngestPort {
  /** Ingests or deletes the message's document; `lastAttempt` records a failure instead of retrying. */
  handle(message: IngestMessage, lastAttempt?: boolean): Promise<IngestOutcome>;
}

/** Everything the worker asks of knowledge. */
export interface KnowledgePort extends KnowledgeSearchPort, KnowledgeAddPort, IngestPort {}
