/**
 * The routes `tool-sources.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const TOOL_SOURCES_ROUTES = declareRoutes("tool-sources", {
  addMcpServer: "POST /v1/namespaces/{name}/mcp-servers",
  listMcpServers: "GET /v1/namespaces/{name}/mcp-servers",
  refreshMcpServer: "POST /v1/namespaces/{name}/mcp-servers/{server}/refresh",
  deleteMcpServer: "DELETE /v1/namespaces/{name}/mcp-servers/{server}",
  addHttpTool: "POST /v1/namespaces/{name}/http-tools",
  deleteHttpTool: "DELETE /v1/namespaces/{name}/http-tools/{tool}",
});
