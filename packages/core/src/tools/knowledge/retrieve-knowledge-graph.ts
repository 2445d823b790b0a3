/**
 * `retrieve_knowledge_graph`: the entities of the tenant's documents nearest to a
 * query, the relationships around them, and the chunks they come from. The
 * original StackVM's parameter is `query`; `knowledge_base` is optional.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import type { KnowledgeSearchPort } from "../../knowledge/knowledge-port";
import type { Tool, ToolContext, ToolResult } from "../tool";
import { KnowledgeBaseField, QueryField, searchResult, searchScope } from "./search-input";

export const RetrieveKnowledgeGraphInput = buildOnce(() =>
  z
    .object({
      query: QueryField(),
      knowledge_base: KnowledgeBaseField(),
    })
    .strict(),
);
export type RetrieveKnowledgeGraphInput = z.infer<ReturnType<typeof RetrieveKnowledgeGraphInput>>;

/** The `retrieve_knowledge_graph` tool over a knowledge search. */
export function retrieveKnowledgeGraphTool(
  search: KnowledgeSearchPort,
): Tool<RetrieveKnowledgeGraphInput> {
  return {
    name: "retrieve_knowledge_graph",
    description:
      "Finds the entities (people, places, products, concepts) of the tenant's uploaded documents that a query is about, and how they relate. Input: query (required), knowledge_base (optional). Result: {entities: [{name, description}], relationships: [{source, target, description}], chunks: [{chunk_id, text, document_id, filename, position, score}]}.",
    get input() {
      return RetrieveKnowledgeGraphInput();
    },
    async run(input: RetrieveKnowledgeGraphInput, context: ToolContext): Promise<ToolResult> {
      const { calls, ...graph } = await search.graph(
        searchScope(context, input.knowledge_base),
        input.query,
      );
      return searchResult(context, { calls, chunks: graph.chunks }, graph);
    },
  };
}
