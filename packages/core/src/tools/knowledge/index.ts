/**
 * The knowledge tools (two searches and `knowledge_add`, the memory a plan writes), built over the knowledge search port: `KnowledgeSearch`
 * in process, or the knowledge function on AWS (`createSystem` builds them and hands them to the registry
 * with the other built-ins).
 */
import type { KnowledgeAddPort, KnowledgeSearchPort } from "../../knowledge/knowledge-port";
import type { Tool } from "../tool";
import { knowledgeAddTool } from "./knowledge-add";
import { retrieveKnowledgeGraphTool } from "./retrieve-knowledge-graph";
import { vectorSearchTool } from "./vector-search";

/**
 * @example
 * const tools = [...builtinTools().values(), ...knowledgeTools(new KnowledgeSearch(deps))];
 */
export function knowledgeTools(search: KnowledgeSearchPort & KnowledgeAddPort): Tool[] {
  return [vectorSearchTool(search), retrieveKnowledgeGraphTool(search), knowledgeAddTool(search)];
}
