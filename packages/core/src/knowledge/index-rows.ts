/**
 * A document's rows in the index, before they are embedded: one per chunk (its
 * graph in its data) and one per entity the chunk's graph names (so that graph
 * search finds entities by meaning). Ids carry the content's hash: the same
 * bytes give the same ids on every ingest, and `replaceDocument` the same rows.
 */
import type { Chunk } from "./chunk";
import type { IndexRow } from "./index-port";
import { type KnowledgeGraph, normalizeEntityName } from "./model";
import type { DocumentRecord } from "./records";

/** The rows of a document without their vectors, and the text each is embedded from. */
export interface UnembeddedRows {
  /** Chunk rows first, in the chunks' order, then entity rows. */
  rows: Array<Omit<IndexRow, "vector">>;
  /** `texts[i]` is embedded for `rows[i]`: a chunk with its heading, an entity with its description. */
  texts: string[];
}

/**
 * The rows of `chunks` and of their `graphs` (one per chunk, same order).
 *
 * @param hash the start of the content's SHA-256, in every row's id.
 */
export function indexRows(
  record: DocumentRecord,
  hash: string,
  chunks: Chunk[],
  graphs: KnowledgeGraph[],
): UnembeddedRows {
  const chunkIds = chunks.map((c) => `${record.document_id}:${hash}:${c.position}`);
  const chunkRows: Array<Omit<IndexRow, "vector">> = chunks.map((chunk, i) => ({
    kind: "chunk",
    id: chunkIds[i]!,
    document_id: record.document_id,
    filename: record.filename,
    position: chunk.position,
    text: chunk.text,
    data: JSON.stringify({ heading: chunk.heading, ...graphs[i] }),
  }));
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
  return {
    rows: [...chunkRows, ...entityRows],
    texts: [
      ...chunks.map((c) => (c.heading ? `${c.heading}\n${c.text}` : c.text)),
      ...entityRows.map((r) => r.text),
    ],
  };
}
