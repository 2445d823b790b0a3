/**
 * `KnowledgeIndex` in memory: an exact search over every row, for unit tests and
 * as the reference the benchmark's recall is measured against.
 */
import {
  checkIndexName,
  cosine,
  type IndexHit,
  type IndexRow,
  type IndexSearch,
  type KnowledgeIndex,
} from "../../knowledge/index-port";

export class MemoryKnowledgeIndex implements KnowledgeIndex {
  /** `{tenant}/{knowledge base}` → rows. */
  readonly #tables = new Map<string, IndexRow[]>();

  #key(tenant: string, knowledgeBase: string): string {
    return `${checkIndexName("tenant", tenant)}/${checkIndexName("knowledge base", knowledgeBase)}`;
  }

  async replaceDocument(
    tenant: string,
    knowledgeBase: string,
    documentId: string,
    rows: IndexRow[],
  ): Promise<void> {
    checkIndexName("document", documentId);
    const key = this.#key(tenant, knowledgeBase);
    const kept = (this.#tables.get(key) ?? []).filter((row) => row.document_id !== documentId);
    this.#tables.set(key, [...kept, ...rows.map((row) => ({ ...row, vector: [...row.vector] }))]);
  }

  async deleteDocument(tenant: string, knowledgeBase: string, documentId: string): Promise<void> {
    checkIndexName("document", documentId);
    const key = this.#key(tenant, knowledgeBase);
    const rows = this.#tables.get(key);
    if (rows)
      this.#tables.set(
        key,
        rows.filter((row) => row.document_id !== documentId),
      );
  }

  async dropKnowledgeBase(tenant: string, knowledgeBase: string): Promise<void> {
    this.#tables.delete(this.#key(tenant, knowledgeBase));
  }

  async search(tenant: string, query: IndexSearch): Promise<IndexHit[]> {
    const hits: IndexHit[] = [];
    for (const knowledgeBase of new Set(query.knowledgeBases)) {
      for (const row of this.#tables.get(this.#key(tenant, knowledgeBase)) ?? []) {
        if (row.kind !== query.kind) continue;
        hits.push(hit(row, knowledgeBase, cosine(query.vector, row.vector)));
      }
    }
    return hits.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id)).slice(0, query.topK);
  }

  async get(tenant: string, knowledgeBase: string, ids: string[]): Promise<IndexHit[]> {
    const wanted = new Set(ids);
    return (this.#tables.get(this.#key(tenant, knowledgeBase)) ?? [])
      .filter((row) => wanted.has(row.id))
      .map((row) => hit(row, knowledgeBase, 0));
  }
}

function hit(row: IndexRow, knowledgeBase: string, score: number): IndexHit {
  const { vector: _, ...rest } = row;
  return { ...rest, knowledge_base: knowledgeBase, score };
}
