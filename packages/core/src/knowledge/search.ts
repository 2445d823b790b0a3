/**
 * What the knowledge tools ask: the chunks nearest to a query, and the knowledge
 * graph around it. Both embed the query once, search only the knowledge bases the
 * task's namespace allows, and hand back the embedding call for the step's ledger.
 */
import type { LlmCall } from "../model";
import { allowedBases, type SearchScope } from "./allowed-bases";
import type { Embedder } from "./embedder";
import type { IndexHit, KnowledgeIndex } from "./index-port";
import type { KnowledgeService } from "./knowledge-service";
import { type ChunkHit, normalizeEntityName } from "./model";

export interface KnowledgeSearchDeps {
  knowledge: Pick<KnowledgeService, "searchable">;
  index: KnowledgeIndex;
  embedder: Embedder;
}

export interface GraphAnswer {
  entities: Array<{ name: string; description: string }>;
  relationships: Array<{ source: string; target: string; description: string }>;
  chunks: ChunkHit[];
}

/** Entity rows read per graph query, before merging by name. */
const GRAPH_ENTITY_HITS = 12;
/** Chunks a graph answer carries at most. */
const GRAPH_CHUNKS = 8;

export class KnowledgeSearch {
  constructor(private readonly deps: KnowledgeSearchDeps) {}

  /** The `top_k` chunks nearest to the query, best first. */
  async chunks(
    scope: SearchScope,
    query: string,
    topK: number,
  ): Promise<{ chunks: ChunkHit[]; calls: LlmCall[] }> {
    const bases = await this.#bases(scope);
    if (bases.length === 0) return { chunks: [], calls: [] };
    const { vectors, calls } = await this.deps.embedder.embed([query]);
    const hits = await this.deps.index.search(scope.tenant, {
      knowledgeBases: bases,
      kind: "chunk",
      vector: vectors[0]!,
      topK,
    });
    return { chunks: hits.map(chunkHit), calls };
  }

  /**
   * The entities nearest to the query, merged by normalized name, the
   * relationships that touch them in the chunks they come from, and those chunks.
   */
  async graph(scope: SearchScope, query: string): Promise<GraphAnswer & { calls: LlmCall[] }> {
    const bases = await this.#bases(scope);
    if (bases.length === 0) return { entities: [], relationships: [], chunks: [], calls: [] };
    const { vectors, calls } = await this.deps.embedder.embed([query]);
    const hits = await this.deps.index.search(scope.tenant, {
      knowledgeBases: bases,
      kind: "entity",
      vector: vectors[0]!,
      topK: GRAPH_ENTITY_HITS,
    });
    const found = hits.map((hit) => ({
      hit,
      entity: JSON.parse(hit.data) as {
        name: string;
        key: string;
        description: string;
        chunk_id: string;
      },
    }));
    const keys = new Set(found.map((f) => f.entity.key));

    // The chunks the found entities come from, best entity score first.
    const chunkScore = new Map<string, { kb: string; score: number }>();
    for (const { hit, entity } of found) {
      const seen = chunkScore.get(entity.chunk_id);
      if (!seen || seen.score < hit.score)
        chunkScore.set(entity.chunk_id, { kb: hit.knowledge_base, score: hit.score });
    }
    const wanted = [...chunkScore].sort((a, b) => b[1].score - a[1].score).slice(0, GRAPH_CHUNKS);
    const byBase = new Map<string, string[]>();
    for (const [id, { kb }] of wanted) byBase.set(kb, [...(byBase.get(kb) ?? []), id]);
    const rows = (
      await Promise.all([...byBase].map(([kb, ids]) => this.deps.index.get(scope.tenant, kb, ids)))
    ).flat();

    const descriptions = new Map<string, { name: string; descriptions: Set<string> }>();
    const describe = (name: string, description: string) => {
      const key = normalizeEntityName(name);
      const entry = descriptions.get(key) ?? { name, descriptions: new Set<string>() };
      if (description.trim()) entry.descriptions.add(description.trim());
      descriptions.set(key, entry);
    };
    for (const { entity } of found) describe(entity.name, entity.description);

    const relationships: GraphAnswer["relationships"] = [];
    const seenRelations = new Set<string>();
    const neighbours = new Set<string>();
    for (const row of rows) {
      const graph = JSON.parse(row.data) as {
        entities?: GraphAnswer["entities"];
        relationships?: GraphAnswer["relationships"];
      };
      for (const relation of graph.relationships ?? []) {
        const source = normalizeEntityName(relation.source);
        const target = normalizeEntityName(relation.target);
        if (!keys.has(source) && !keys.has(target)) continue;
        const id = `${source}\u0000${target}\u0000${relation.description}`;
        if (seenRelations.has(id)) continue;
        seenRelations.add(id);
        relationships.push(relation);
        neighbours.add(source).add(target);
      }
      for (const entity of graph.entities ?? []) {
        if (neighbours.has(normalizeEntityName(entity.name)))
          describe(entity.name, entity.description);
      }
    }
    for (const key of neighbours) if (!descriptions.has(key)) describe(key, "");

    const chunks = rows
      .map((row) => chunkHit({ ...row, score: chunkScore.get(row.id)?.score ?? 0 }))
      .sort((a, b) => b.score - a.score);
    const entities = [...descriptions.values()].map((e) => ({
      name: e.name,
      description: [...e.descriptions].join(" "),
    }));
    return { entities, relationships, chunks, calls };
  }

  #bases(scope: SearchScope): Promise<string[]> {
    return this.deps.knowledge.searchable(scope.tenant, allowedBases(scope), scope.knowledgeBase);
  }
}

function chunkHit(hit: IndexHit): ChunkHit {
  return {
    chunk_id: hit.id,
    text: hit.text,
    knowledge_base: hit.knowledge_base,
    document_id: hit.document_id,
    filename: hit.filename,
    position: hit.position,
    score: Math.round(hit.score * 10_000) / 10_000,
  };
}

export { allowedBases, type SearchScope };
