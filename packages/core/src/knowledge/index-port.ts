/**
 * The knowledge index port: vectors with their rows, one table per tenant and
 * knowledge base. Adapters: `MemoryKnowledgeIndex` (here) and `LanceKnowledgeIndex`
 * (@stackvm/aws, LanceDB on S3 or a local folder); both pass the one conformance
 * suite in test/conformance/knowledge-index.suite.ts.
 *
 * Tenant isolation is the adapter's duty, not the caller's: every method takes the
 * tenant, an adapter keeps each tenant's rows where no other tenant's call can
 * reach them (its own tables), and refuses names that could point elsewhere.
 */

/** A chunk of a document, or an entity the graph extraction found in one. */
export interface IndexRow {
  kind: "chunk" | "entity";
  /** The chunk id, or `{chunk_id}:e{n}` for an entity row. */
  id: string;
  document_id: string;
  filename: string;
  /** The chunk's place in its document, from 0. */
  position: number;
  /** The chunk's text, or the entity's `name: description`. */
  text: string;
  /** JSON: a chunk's graph (`{entities, relationships}`), an entity's `{name, key, description, chunk_id}`. */
  data: string;
  vector: number[];
}

/** A row found by a search, without its vector. */
export interface IndexHit extends Omit<IndexRow, "vector"> {
  knowledge_base: string;
  /** Cosine similarity to the query, higher is nearer. */
  score: number;
}

export interface IndexSearch {
  /** The knowledge bases to search (the caller has checked the namespace allows them). */
  knowledgeBases: string[];
  kind: IndexRow["kind"];
  vector: number[];
  topK: number;
}

export interface KnowledgeIndex {
  /**
   * Makes the document's rows exactly `rows`: earlier rows of the document go.
   * Running it twice with the same rows leaves the same index (ingest retries).
   */
  replaceDocument(
    tenant: string,
    knowledgeBase: string,
    documentId: string,
    rows: IndexRow[],
  ): Promise<void>;
  deleteDocument(tenant: string, knowledgeBase: string, documentId: string): Promise<void>;
  /** Removes the knowledge base's table; a missing one is not an error. */
  dropKnowledgeBase(tenant: string, knowledgeBase: string): Promise<void>;
  /** The nearest rows of that kind across the knowledge bases, best first; missing ones are empty. */
  search(tenant: string, query: IndexSearch): Promise<IndexHit[]>;
  /** Rows by id (chunks, usually), in no particular order; missing ids are left out. */
  get(tenant: string, knowledgeBase: string, ids: string[]): Promise<IndexHit[]>;
}

const NAME = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Refuses a tenant or knowledge base name that could reach outside its own table
 * (a path separator, `..`, a quote for a filter): adapters call it first.
 */
export function checkIndexName(
  what: "tenant" | "knowledge base" | "document",
  name: string,
): string {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(
      `knowledge index: ${what} ${JSON.stringify(name)} is not 1 to 128 of A-Z, a-z, 0-9, _ and -`,
    );
  }
  return name;
}

/**
 * Cosine similarity of two vectors of one length; 0 when either is all zeros.
 *
 * @example
 * cosine([1, 0], [1, 0]) // 1
 */
export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
