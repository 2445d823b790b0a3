/**
 * The MCP server face: `POST /mcp`, MCP's Streamable HTTP transport with the
 * official SDK's server, stateless (a server and a transport per request, so
 * that it runs the same on Lambda as on a laptop), behind the same key check
 * as every `/v1` route (app.ts). The tenant's namespaces and saved templates
 * are its tools (`mcp/tools.ts`); a call runs a task (`mcp/run.ts`).
 *
 * GET and DELETE answer 405 (the app's answer for a method a path does not
 * take, in JSON-RPC's shape): a stateless server offers no stream of its own
 * and no session to end, as the transport's specification allows.
 *
 * The server keeps no state, but it names each client's session
 * (`Mcp-Session-Id`, given on `initialize`), so that a call's task has an id
 * derived from the session and the request's id: a `notifications/cancelled`
 * of the call, which arrives as a request of its own (on Lambda, maybe at
 * another instance), cancels that task.
 */
import { randomBytes } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { ApiDeps } from "../deps";
import type { ApiApp, ApiEnv } from "../env";
import { JSON_RPC, jsonRpcError, MCP_PATH } from "../mcp/errors";
import { callTaskId, refusal, runCall } from "../mcp/run";
import { listTools, resolveTool, ToolArgumentsError, taskInputOf } from "../mcp/tools";

const SESSION_HEADER = "mcp-session-id";
/** A session id as MCP allows one: visible ASCII; this server's are `mcp_` and 32 hex digits. */
const SESSION = /^[\x21-\x7e]{1,128}$/;
/**
 * The longest progress token a call may send: it comes back in every progress
 * notification, one per commit, so a token near the body limit would be sent
 * back a megabyte per step.
 */
const MAX_PROGRESS_TOKEN_CHARS = 256;
/** SSE comments on a call's stream while its task runs, so that no proxy closes it as idle. */
const KEEP_ALIVE_MS = 15_000;

const INSTRUCTIONS =
  "Each tool runs a StackVM task: run_{namespace} plans and runs a goal in that namespace; a tpl_… tool " +
  "runs a saved plan with its inputs as arguments. Calls send progress as the task commits steps and " +
  "answer with the task's final answer; a long task answers with its task id, to read over the HTTP API.";

export function registerMcpRoutes(app: ApiApp): void {
  app.post(MCP_PATH, async (c) => {
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return c.json(
        jsonRpcError(
          JSON_RPC.parseError,
          "the body is not JSON: send one JSON-RPC message with Content-Type: application/json",
        ),
        400,
      );
    }
    if (Array.isArray(body)) {
      return c.json(
        jsonRpcError(
          JSON_RPC.invalidRequest,
          "a JSON-RPC batch is not taken (MCP 2025-06-18 removed batching): send one message per request",
        ),
        400,
      );
    }
    const sent = c.req.header(SESSION_HEADER);
    if (sent !== undefined && !SESSION.test(sent)) {
      return c.json(
        jsonRpcError(
          JSON_RPC.invalidRequest,
          "the Mcp-Session-Id header is not a session id (1 to 128 visible ASCII characters): send the one initialize answered with",
        ),
        400,
      );
    }
    const deps = c.get("deps");
    const tenant = c.get("tenantId");
    const session = sent ?? null;
    const cancelled = cancelledRequest(body);
    if (cancelled !== undefined) {
      // Done before answering: on Lambda nothing runs after the answer.
      await cancelCall(deps, tenant, session, cancelled);
      return c.body(null, 202);
    }

    const server = serverFor(c, session);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      keepAliveMs: KEEP_ALIVE_MS,
    });
    await server.connect(transport);
    const response = await transport.handleRequest(c.req.raw, { parsedBody: body });
    if (isInitializeRequest(body) && response.ok) {
      response.headers.set(SESSION_HEADER, `mcp_${randomBytes(16).toString("hex")}`);
    }
    return response;
  });
}

/** A server for this request: the tenant's tools, its calls' tasks. */
function serverFor(c: Context<ApiEnv>, session: string | null): Server {
  const deps = c.get("deps");
  const tenant = c.get("tenantId");
  const server = new Server(
    { name: "stackvm", title: "StackVM Serverless", version: "0.1.0" },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    try {
      return await listTools(deps, tenant, request.params?.cursor);
    } catch (error) {
      throw asMcpError(error, c);
    }
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    try {
      const target = await resolveTool(deps, tenant, name);
      if (!target) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Unknown tool: '${name.slice(0, 200)}' is no tool of this API key's tenant; tools/list lists them`,
        );
      }
      let input: ReturnType<typeof taskInputOf>;
      try {
        input = taskInputOf(target, request.params.arguments, name);
      } catch (error) {
        if (error instanceof ToolArgumentsError) {
          return refusal({ code: "invalid_arguments", message: error.message });
        }
        throw error;
      }
      const token = request.params._meta?.progressToken;
      if (typeof token === "string" && token.length > MAX_PROGRESS_TOKEN_CHARS) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `_meta.progressToken takes ${token.length} characters; a progress token is at most ${MAX_PROGRESS_TOKEN_CHARS} (it comes back in every progress notification): send a shorter one, or a number`,
        );
      }
      const progress =
        token === undefined
          ? null
          : async (p: { progress: number; message: string }) => {
              // A client that went away misses its progress; the task goes on.
              await extra
                .sendNotification({
                  method: "notifications/progress",
                  params: { progressToken: token, progress: p.progress, message: p.message },
                })
                .catch(() => {});
            };
      return await runCall(deps, tenant, input, {
        taskId: callTaskId(tenant, session, extra.requestId),
        signal: AbortSignal.any([extra.signal, c.req.raw.signal]),
        progress,
      });
    } catch (error) {
      if (error instanceof McpError) throw error;
      // The API's own refusals (a quota, a plan the checks refuse) are the tool's errors.
      if (isApiError(error)) return refusal(error);
      throw asMcpError(error, c);
    }
  });
  return server;
}

/** The request id of a `notifications/cancelled`, else undefined. */
function cancelledRequest(body: unknown): string | number | undefined {
  const message = body as { method?: unknown; params?: { requestId?: unknown } } | null;
  if (message?.method !== "notifications/cancelled") return undefined;
  const id = message.params?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** Cancels the task of the session's request, if it started one; anything else is no-op. */
async function cancelCall(
  deps: ApiDeps,
  tenant: string,
  session: string | null,
  requestId: string | number,
): Promise<void> {
  const taskId = callTaskId(tenant, session, requestId);
  if (taskId === undefined) return;
  try {
    await deps.tasks.cancel(tenant, taskId);
    deps.log.info("mcp call cancelled", { tenant_id: tenant, task_id: taskId });
  } catch (error) {
    if (!isApiError(error)) throw error;
  }
}

/** Kinds of error that are the server's, not the request's. */
const SERVER_KINDS = new Set(["internal", "step", "retryable"]);

/** A StackVMError of a kind the API answers as a client's error (not a 500). */
function isApiError(error: unknown): error is { kind: string; code: string; message: string } {
  const e = error as { kind?: unknown; code?: unknown } | null;
  return typeof e?.kind === "string" && !SERVER_KINDS.has(e.kind) && typeof e.code === "string";
}

function asMcpError(error: unknown, c: Context<ApiEnv>): McpError {
  if (error instanceof McpError) return error;
  if (isApiError(error)) {
    return new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`);
  }
  const e = error as Error;
  c.get("deps").log.error("unhandled error", {
    request_id: c.get("requestId"),
    error: { name: e?.name, message: e?.message, stack: e?.stack },
  });
  return new McpError(ErrorCode.InternalError, "internal error");
}
