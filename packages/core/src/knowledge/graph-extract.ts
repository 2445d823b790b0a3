/**
 * The graph stage of an ingest: one `knowledge_graph` LLM call per chunk, a few
 * in flight at once, within what the tenant's month has left. A chunk the model
 * gives no valid graph for (or every chunk, with no LLM configured) has none: its
 * text is still embedded. A delivery that fails on a transient error keeps what it
 * got (`graph-checkpoint.ts`), so that the next one does not ask for it again.
 */
import { isErrorKind } from "../errors";
import type { BudgetLeft, LlmBudget, LlmSession } from "../llm/types";
import type { LlmCall } from "../model";
import type { Blobs } from "../ports/blobs";
import type { KnowledgeStore } from "../store/knowledge-store";
import type { Chunk } from "./chunk";
import { loadCheckpoint, saveCheckpoint } from "./graph-checkpoint";
import { ranOut } from "./ingest-budget";
import { KnowledgeGraph } from "./model";
import type { DocumentRecord } from "./records";

/** What the graph stage calls, keeps its checkpoint in, and reports its progress to. */
export interface GraphStageDeps {
  knowledge: KnowledgeStore;
  blobs: Blobs;
  /** A session for the graph calls of one ingest, within what the tenant's month has left. */
  llm: (budget: LlmBudget) => LlmSession;
  /** Graph extractions in flight at once (4 unless set). */
  graphConcurrency?: number;
  /** Tells the document how far the stage is. */
  progress: (stage: string, done: number, total: number) => Promise<void>;
}

/**
 * One graph per chunk, in the chunks' order. The calls made (and those a kept
 * checkpoint made) are pushed onto `calls`, also when the stage fails.
 *
 * @param hash the content's hash: a checkpoint of other content is not used.
 */
export async function extractGraphs(
  deps: GraphStageDeps,
  record: DocumentRecord,
  hash: string,
  chunks: Chunk[],
  calls: LlmCall[],
  left: BudgetLeft,
): Promise<KnowledgeGraph[]> {
  // A delivery before this one failed after some graphs: those are not asked again,
  // and its calls are this ingest's (the month is charged once, at the end).
  const saved = await loadCheckpoint(deps.blobs, record, hash);
  const graphs: (KnowledgeGraph | undefined)[] = saved?.graphs ?? new Array(chunks.length);
  if (saved) calls.push(...saved.calls);
  // Said before the first call, so that a short document does not read as still extracting.
  await deps.progress("graph", 0, chunks.length);
  const session = deps.llm({
    ...(left.tokens === undefined ? {} : { tokensLeft: left.tokens }),
    ...(left.costUsd === undefined ? {} : { costLeftUsd: left.costUsd }),
  });
  const todo = chunks.map((_, i) => i).filter((i) => graphs[i] == null);
  let next = 0;
  let done = chunks.length - todo.length;
  const worker = async () => {
    while (next < todo.length) {
      const i = todo[next++]!;
      graphs[i] = await graphOf(session, record, chunks[i]!);
      done++;
      if (done % 8 === 0) await deps.progress("graph", done, chunks.length);
    }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(deps.graphConcurrency ?? 4, todo.length) }, worker),
    );
  } catch (error) {
    if (isErrorKind(error, "retryable")) {
      // Tried again from the queue: keep what this delivery got, so it is not asked again.
      await saveCheckpoint(deps, record, hash, {
        graphs,
        calls: [...(saved?.calls ?? []), ...session.calls],
      }).catch(() => undefined);
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

/** The graph of one chunk; none (empty) when the model refuses or no LLM is configured. */
async function graphOf(
  session: LlmSession,
  record: DocumentRecord,
  chunk: Chunk,
): Promise<KnowledgeGraph> {
  try {
    return await session.json({
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
    return { entities: [], relationships: [] };
  }
}

const GRAPH_PROMPT = [
  "Extract a knowledge graph from the text the user gives.",
  "entities: the people, organizations, places, products, concepts and events the text is about, each with its name as written and a one-sentence description from the text.",
  "relationships: how two of those entities relate, as source and target names exactly as in entities, with a short description.",
  'Use only what the text says. Answer with JSON: {"entities": [{"name", "description"}], "relationships": [{"source", "target", "description"}]}.',
].join("\n");
