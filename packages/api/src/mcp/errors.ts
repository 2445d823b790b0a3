/**
 * Errors of `/mcp` as JSON-RPC errors (`{"jsonrpc": "2.0", "id": null,
 * "error": {"code", "message", "data"}}`), as MCP clients read an HTTP error of
 * the Streamable HTTP transport. The API's own error answers on `/mcp` (the key
 * check's 401, the body limit's 413, the JSON check's 400, the rate limit's
 * 429, a method's 405) are rewritten on the way out, so that one place still
 * decides every status; the API's `code` stays in `data.code`. Light: the app
 * installs it at start, with no MCP SDK loaded.
 */
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "../env";
import { MCP_ROUTES } from "../routes/mcp.paths";

/** The path of the MCP server face. */
export const MCP_PATH = MCP_ROUTES.mcp.path;

/** JSON-RPC's codes (and the -32000 range the MCP SDK's transports use for HTTP-level errors). */
export const JSON_RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  internalError: -32603,
  server: -32000,
} as const;

export function jsonRpcError(code: number, message: string, data?: Record<string, unknown>) {
  return {
    jsonrpc: "2.0" as const,
    id: null,
    error: { code, message, ...(data === undefined ? {} : { data }) },
  };
}

/** The JSON-RPC code of an API error answer. */
function codeOf(status: number, apiCode: string): number {
  if (apiCode === "malformed_json") return JSON_RPC.parseError;
  if (status >= 500) return JSON_RPC.internalError;
  if (status === 400 || status === 405 || status === 413 || status === 415) {
    return JSON_RPC.invalidRequest;
  }
  return JSON_RPC.server;
}

export const mcpErrorShape: MiddlewareHandler<ApiEnv> = async (c, next) => {
  await next();
  if (c.req.path !== MCP_PATH || c.res.status < 400) return;
  const headers = new Headers(c.res.headers);
  // MCP clients read a 401's challenge to learn that a bearer token is wanted.
  if (c.res.status === 401) headers.set("www-authenticate", 'Bearer realm="stackvm"');
  if (!c.res.headers.get("content-type")?.includes("application/json")) return;
  const body = (await c.res.clone().json()) as {
    jsonrpc?: unknown;
    error?: { code?: unknown; message?: unknown; details?: unknown };
  };
  const error = body?.error;
  if (body?.jsonrpc !== undefined || !error || typeof error.message !== "string") return;
  const apiCode = String(error.code ?? "error");
  headers.delete("content-length");
  c.res = new Response(
    JSON.stringify(
      jsonRpcError(codeOf(c.res.status, apiCode), error.message, {
        code: apiCode,
        ...(error.details === undefined ? {} : { details: error.details }),
      }),
    ),
    { status: c.res.status, headers },
  );
};
