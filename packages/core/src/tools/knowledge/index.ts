/**
 * The knowledge tools, built over a `KnowledgeSearch` (they need the index and
 * the embedder, so `createSystem` builds them and hands them to the registry
 * with the other built-ins).
 */
import type { KnowledgeSearch } from "../../knowledge/search";
import type { Tool } from "../tool";
import { retrieveKnowledgeGraphTool } from "./retrieve-knowledge-graph";
import { vectorSearchTool } from "./vector-search";

/**
 * @example
 * const tools = [...builtinTools().values(), ...knowledgeTools(new KnowledgeSearch(deps))];
 */
export function knowledgeTools(search: KnowledgeSearch): Tool[] {
  return [vectorSearchTool(search), retrieveKnowledgeGraphTool(search)];
}
