/**
 * `vector_search`: the chunks of the tenant's documents nearest in meaning to a
 * query, with the original StackVM's parameters (`query`, `top_k`) and an
 * optional `knowledge_base`. Each chunk carries a stable `chunk_id` to cite.
 */
import * as z from "zod";
import type { KnowledgeSearch } from "../../knowledge/search";
import type { Tool, ToolContext, ToolResult } from "../tool";

export const VectorSearchInput = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, "query must not be empty")
      .max(8_000, "query is longer than 8,000 characters: ask a shorter question")
      .describe("What to look for, in words."),
    top_k: z
      .number()
      .int()
      .min(1)
      .max(50)
      .default(5)
      .describe("How many chunks to return (1 to 50, default 5)."),
    knowledge_base: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("Search only this knowledge base; default: every one the namespace allows."),
  })
  .strict();
export type VectorSearchInput = z.infer<typeof VectorSearchInput>;

/** The `vector_search` tool over a knowledge search. */
export function vectorSearchTool(search: KnowledgeSearch): Tool<VectorSearchInput> {
  return {
    name: "vector_search",
    description:
      "Finds the passages of the tenant's uploaded documents nearest in meaning to a query. Input: query (required), top_k (default 5), knowledge_base (optional). Result: a list of chunks [{chunk_id, text, document_id, filename, position, score}], best first. Pass them as context to llm_generate and ask it to cite chunk_id values.",
    input: VectorSearchInput,
    async run(input: VectorSearchInput, context: ToolContext): Promise<ToolResult> {
      const { chunks, calls } = await search.chunks(
        {
          tenant: context.tenantId,
          namespace: context.namespace,
          knowledgeBase: input.knowledge_base,
        },
        input.query,
        input.top_k,
      );
      // The query's embedding is an LLM call of this step: on its ledger.
      context.llm.calls.push(...calls);
      return { value: chunks, details: { chunks: chunks.map((c) => c.chunk_id) } };
    },
  };
}
