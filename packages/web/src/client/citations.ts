/**
 * Where a step's cited chunks come from: the chunks that `vector_search` and
 * `retrieve_knowledge_graph` returned in the task's commits carry their
 * `chunk_id`, document and position; a commit whose outputs name a chunk id
 * (an `llm_generate` answer that cites `[chunk_id]`, or the search itself) cites
 * that chunk.
 */

export interface ChunkSource {
  chunk_id: string;
  document_id: string;
  filename: string;
  position: number;
}

function isChunk(value: unknown): value is ChunkSource {
  const v = value as Partial<ChunkSource> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.chunk_id === "string" &&
    typeof v.filename === "string" &&
    typeof v.document_id === "string" &&
    typeof v.position === "number"
  );
}

/** Every chunk found in these values (commits' outputs), by id. */
export function chunkSources(values: Iterable<unknown>): Map<string, ChunkSource> {
  const found = new Map<string, ChunkSource>();
  const walk = (value: unknown, depth: number): void => {
    if (depth > 12 || value === null || typeof value !== "object") return;
    if (isChunk(value)) {
      const { chunk_id, document_id, filename, position } = value;
      found.set(chunk_id, { chunk_id, document_id, filename, position });
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) walk(child, depth + 1);
  };
  for (const value of values) walk(value, 0);
  return found;
}

/** The known chunks that `outputs` names, in the order they first appear. */
export function citedChunks(outputs: unknown, sources: Map<string, ChunkSource>): ChunkSource[] {
  const text = JSON.stringify(outputs) ?? "";
  return [...sources.values()]
    .map((source) => ({ source, at: text.indexOf(source.chunk_id) }))
    .filter((c) => c.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((c) => c.source);
}
