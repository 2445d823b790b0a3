/**
 * What `vector_search` and `retrieve_knowledge_graph` both take (the original
 * StackVM's `query`, and an optional `knowledge_base`) and the search scope a
 * call's context gives them: the step's tenant and namespace.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import type { ChunkHit } from "../../knowledge/model";
import type { SearchScope } from "../../knowledge/search";
import type { LlmCall } from "../../model";
import type { ToolContext, ToolResult } from "../tool";

/** The question, in words. */
export const QueryField = buildOnce(() =>
  z
    .string()
    .trim()
    .min(1, "query must not be empty")
    .max(8_000, "query is longer than 8,000 characters: ask a shorter question")
    .describe("What to look for, in words."),
);

/** One knowledge base to search instead of every one the namespace allows. */
export const KnowledgeBaseField = buildOnce(() =>
  z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("Search only this knowledge base; default: every one the namespace allows."),
);

/**
 * Where a call searches: the step's tenant and namespace, and the knowledge base
 * asked for. A search embeds its query, which spends tokens: the branch's budget
 * is checked first, as before any LLM call.
 */
export function searchScope(context: ToolContext, knowledgeBase: string | undefined): SearchScope {
  context.llm.checkBudget();
  return { tenant: context.tenantId, namespace: context.namespace, knowledgeBase };
}

/**
 * A search's result as the tool answers it: the query's embedding calls go on
 * the step's ledger, and the details name the chunks found (for citations).
 */
export function searchResult(
  context: ToolContext,
  found: { calls: LlmCall[]; chunks: ChunkHit[] },
  value: unknown,
): ToolResult {
  context.llm.calls.push(...found.calls);
  return { value, details: { chunks: found.chunks.map((c) => c.chunk_id) } };
}
