/**
 * The MCP client port over the official SDK (`@modelcontextprotocol/sdk`), in
 * Streamable HTTP. One connection per call (initialize, the request, session end):
 * a worker runs one step per invocation and keeps nothing between them.
 *
 * Every byte goes through core's `guardedFetch`, given to the SDK as its `fetch`:
 * the namespace's allowed hosts, the address guard (no private, loopback or
 * metadata address, loopback only in local mode for a listed host), a deadline, a
 * size cap on answers, no redirects, and the step's idempotency key as
 * `Idempotency-Key`. The standalone GET stream for server-initiated messages is
 * answered 405 here without a request: a step only asks and reads the answer.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  guardedFetch,
  type McpCallResult,
  type McpClient,
  type McpConnection,
  type McpToolInfo,
  StackVMError,
  StepError,
} from "@stackvm/core";

/** Statuses whose answers have no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/** The time one call or listing has left: one deadline for all its requests. */
type Budget = () => number;

function guardedFetchLike(connection: McpConnection, left: Budget) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET") return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (connection.idempotencyKey) headers["idempotency-key"] = connection.idempotencyKey;
    const body = typeof init?.body === "string" ? init.body : undefined;
    const answer = await guardedFetch(
      { url: String(url), method, headers, ...(body === undefined ? {} : { body }) },
      {
        allowedHosts: connection.allowedHosts,
        policy: connection.policy,
        ...(connection.policy.resolve ? { resolve: connection.policy.resolve } : {}),
        timeoutMs: left(),
        maxResponseBytes: connection.maxResponseBytes,
        maxRedirects: 0,
      },
    );
    const empty = NO_BODY.has(answer.status) || answer.body.length === 0;
    return new Response(empty ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers: answer.headers,
    });
  };
}

/** A guard refusal stays itself; any other failure names the server. */
function asStepError(connection: McpConnection, error: unknown): StackVMError {
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof StackVMError && cause.code !== "http_error") return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new StepError(
    "mcp_unreachable",
    `the MCP server '${connection.server}' (${connection.url}) could not be reached or did not answer: ${message.slice(0, 300)}`,
    { server: connection.server },
  );
}

/** How long ending the session may take: a courtesy to the server, not worth a slot. */
const SESSION_END_MS = 1_000;

/**
 * One connection for one piece of work, all of it within `connection.timeoutMs`:
 * initialize, the requests and the session's end share one deadline (each used
 * to have its own, so a slow server held a worker slot three times as long).
 */
async function withClient<T>(
  connection: McpConnection,
  work: (client: Client, options: { timeout: number; signal: AbortSignal }) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + connection.timeoutMs;
  const left: Budget = () => Math.max(1, deadline - Date.now());
  const signal = AbortSignal.timeout(connection.timeoutMs);
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    requestInit: { headers: connection.headers },
    fetch: guardedFetchLike(connection, left),
  });
  const client = new Client({ name: "stackvm", version: "1.0.0" });
  try {
    await client.connect(transport, { timeout: left(), signal });
    return await work(client, {
      get timeout() {
        return left();
      },
      signal,
    });
  } catch (error) {
    throw asStepError(connection, error);
  } finally {
    await Promise.race([
      transport.terminateSession().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, SESSION_END_MS).unref()),
    ]);
    await client.close().catch(() => undefined);
  }
}

/** The MCP client port over the official SDK. */
export class SdkMcpClient implements McpClient {
  async listTools(connection: McpConnection): Promise<McpToolInfo[]> {
    return withClient(connection, async (client, options) => {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page++) {
        const answer = await client.listTools(cursor ? { cursor } : undefined, {
          timeout: options.timeout,
          signal: options.signal,
        });
        for (const tool of answer.tools) {
          tools.push({
            name: tool.name,
            description: tool.description ?? "",
            input_schema: tool.inputSchema as Record<string, unknown>,
          });
        }
        cursor = answer.nextCursor;
        if (!cursor) break;
      }
      return tools;
    });
  }

  async callTool(
    connection: McpConnection,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<McpCallResult> {
    return withClient(connection, async (client, options) => {
      const answer = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: options.timeout,
        signal: options.signal,
      });
      return {
        content: (answer.content ?? []) as McpCallResult["content"],
        ...(answer.structuredContent
          ? { structuredContent: answer.structuredContent as Record<string, unknown> }
          : {}),
        ...(answer.isError ? { isError: true } : {}),
      };
    });
  }
}
