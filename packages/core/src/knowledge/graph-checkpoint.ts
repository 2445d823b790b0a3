/**
 * The graph checkpoint of an ingest: a delivery that fails after the LLM gave
 * some chunks their graphs (the embedding server down, a graph call timing out)
 * keeps those graphs and the calls it made in a blob beside the original, named
 * on the document. The next delivery of the same version and content asks only
 * for the chunks without one, and counts the kept calls as its own (the month is
 * charged once, at the end).
 */
import type { LlmCall } from "../model";
import type { Blobs } from "../ports/blobs";
import type { KnowledgeStore } from "../store/knowledge-store";
import type { KnowledgeGraph } from "./model";
import { type DocumentRecord, documentBlobPrefix } from "./records";

/** The graphs had so far (a gap: a chunk still without one) and the calls that got them. */
export interface GraphCheckpoint {
  graphs: (KnowledgeGraph | undefined)[];
  calls: LlmCall[];
}

/** The graphs and calls a failed delivery of this version and content (`hash`) kept, if any. */
export async function loadCheckpoint(
  blobs: Blobs,
  record: DocumentRecord,
  hash: string,
): Promise<GraphCheckpoint | null> {
  const saved = record.graph_checkpoint;
  if (!saved || saved.hash !== hash) return null;
  const bytes = await blobs.get(checkpointPrefix(record), saved.sha256);
  if (!bytes) return null;
  const parsed = JSON.parse(new TextDecoder().decode(bytes)) as {
    graphs: (KnowledgeGraph | null)[];
    calls: LlmCall[];
  };
  return { graphs: parsed.graphs.map((g) => g ?? undefined), calls: parsed.calls };
}

/** Keeps the graphs got so far and the calls made, for the next delivery (`loadCheckpoint`). */
export async function saveCheckpoint(
  deps: { blobs: Blobs; knowledge: KnowledgeStore },
  record: DocumentRecord,
  hash: string,
  checkpoint: GraphCheckpoint,
): Promise<void> {
  const body = JSON.stringify({
    graphs: Array.from(checkpoint.graphs, (g) => g ?? null),
    calls: checkpoint.calls,
  });
  const ref = await deps.blobs.put(
    checkpointPrefix(record),
    new TextEncoder().encode(body),
    "application/json",
  );
  await deps.knowledge.updateDocument(
    record.tenant_id,
    record.knowledge_base,
    record.document_id,
    { set: [[["graph_checkpoint"], { hash, sha256: ref.sha256 }]] },
    { exists: true, equals: { version: record.version } },
  );
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
