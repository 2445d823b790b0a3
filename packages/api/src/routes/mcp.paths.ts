/**
 * The route `mcp.ts` registers (the MCP server face, which the OpenAPI
 * document does not describe: its name is no operationId), declared apart from
 * it so that the API's start routes it without loading the MCP SDK
 * (`route-groups.ts`). `mcp/errors.ts` takes the path from here.
 */
import { declareRoutes } from "../route-declaration";

export const MCP_ROUTES = declareRoutes("mcp", {
  mcp: "POST /mcp",
});
