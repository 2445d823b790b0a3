/**
 * What an ingest writes on its document: the stage it is at (so a reader sees
 * `extract`, `graph`, `embed`, `index` move), and its outcome with its usage.
 * Every write is on condition that the document is still the version being
 * ingested: an upload that replaced it meanwhile is never overwritten.
 */
import type { Clock } from "../ports/clock";
import type { KnowledgeStore } from "../store/knowledge-store";
import type { IngestUsage } from "./model";
import type { DocumentRecord } from "./records";

/** The store and clock a document's status is written with. */
export interface StatusDeps {
  knowledge: KnowledgeStore;
  clock: Clock;
}

/** How an ingest ended, as its document keeps it. */
export interface IngestResult {
  status: "ready" | "failed";
  chunks: number;
  error: { code: string; message: string } | null;
}

/** Marks the document `ingesting` at `stage`, `done` of `total` through it. */
export async function writeProgress(
  deps: StatusDeps,
  record: DocumentRecord,
  stage: string,
  done: number,
  total: number,
): Promise<void> {
  await setOnVersion(deps, record, [
    [["status"], "ingesting"],
    [["progress"], { stage, done, total }],
  ]);
}

/** Writes the ingest's outcome and what it spent; a ready document's progress reads `done`. */
export async function writeResult(
  deps: StatusDeps,
  record: DocumentRecord,
  result: IngestResult,
  usage: IngestUsage,
): Promise<void> {
  await setOnVersion(deps, record, [
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
  ]);
}

/** Sets `fields` and `updated_at`, only while the document is still the version being ingested. */
async function setOnVersion(
  deps: StatusDeps,
  record: DocumentRecord,
  fields: Array<[string[], unknown]>,
): Promise<void> {
  await deps.knowledge.updateDocument(
    record.tenant_id,
    record.knowledge_base,
    record.document_id,
    { set: [...fields, [["updated_at"], new Date(deps.clock.now()).toISOString()]] },
    { exists: true, equals: { version: record.version } },
  );
}
