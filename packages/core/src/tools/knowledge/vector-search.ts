/**
 * `vector_search`: the chunks of the tenant's documents nearest in meaning to a
 * query, with the original StackVM's parameters (`query`, `top_k`) and an
 * optional `knowledge_base`. Each chunk carries a stable `chunk_id` to cite.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import type { KnowledgeSearchPort } from "../../knowledge/knowledge-port";
import type { Tool, ToolContext, ToolResult } from "../tool";
import { KnowledgeBaseField, QueryField, searchResult, searchScope } from "./search-input";

export const VectorSearchInput = buildOnce(() =>
  z
    .object({
      query: QueryField(),
      top_k: z
        .number()
        .int()
        .min(1)
        .max(50)
        .default(5)
        .describe("How many chunks to return (1 to 50, default 5)."),
      knowledge_base: KnowledgeBaseField(),
    })
    .strict(),
);
export type VectorSearchInput = z.infer<ReturnType<typeof VectorSearchInput>>;

/** The `vector_search` tool over a knowledge search. */
export function vectorSearchTool(search: KnowledgeSearchPort): Tool<VectorSearchInput> {
  return {
    name: "vector_search",
    description:
      "Finds the passages of the tenant's uploaded documents nearest in meaning to a query. Input: query (required), top_k (default 5), knowledge_base (optional). Result: a list of chunks [{chunk_id, text, document_id, filename, position, score}], best first. Pass them as context to llm_generate and ask it to cite chunk_id values.",
    get input() {
      return VectorSearchInput();
    },
    async run(input: VectorSearchInput, context: ToolContext): Promise<ToolResult> {
      const found = await search.chunks(
        searchScope(context, input.knowledge_base),
        input.query,
        input.top_k,
      );
      return searchResult(context, found, found.chunks);
    },
  };
}
