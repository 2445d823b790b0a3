/**
 * An MCP server made with the official SDK's low-level `Server` (which, unlike
 * its `McpServer`, lets a test list whatever it likes: two tools of one name),
 * in stateless Streamable HTTP on 127.0.0.1. The test scripts what it lists
 * (names, input schemas) and how it answers a call (slowly, say), and reads the
 * headers it received.
 */
import { createServer, type Server as HttpServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export interface ScriptedTool {
  name: string;
  description?: string;
  /** The tool's `inputSchema`; `{"type": "object"}` when not given. */
  inputSchema?: Record<string, unknown>;
}

export interface ScriptedMcpServer {
  url: string;
  /** The headers of every request received, in order. */
  headers: IncomingHttpHeaders[];
  /** What `tools/list` answers; change it between listings. */
  tools: ScriptedTool[];
  /** Runs before each `tools/list` is answered (to make it slow, say). */
  beforeList: () => Promise<void>;
  /** `tools/list` requests received so far. */
  lists: number;
  /** How a `tools/call` is answered (the text of its one content item). */
  onCall: (name: string, args: Record<string, unknown>) => Promise<string>;
  /** Calls in flight now, and the most there were at once. */
  inFlight: { now: number; most: number };
  stop(): Promise<void>;
}

export async function startScriptedMcp(tools: ScriptedTool[]): Promise<ScriptedMcpServer> {
  const state: ScriptedMcpServer = {
    url: "",
    headers: [],
    tools,
    beforeList: async () => {},
    lists: 0,
    onCall: async (name) => `called ${name}`,
    inFlight: { now: 0, most: 0 },
    stop: async () => {},
  };
  const mcpServer = () => {
    const server = new Server(
      { name: "scripted", version: "1.0.0" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      state.lists += 1;
      await state.beforeList();
      return {
        tools: state.tools.map((t) => ({
          name: t.name,
          description: t.description ?? `the ${t.name} tool`,
          inputSchema: { type: "object" as const, ...t.inputSchema },
        })),
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      state.inFlight.now += 1;
      state.inFlight.most = Math.max(state.inFlight.most, state.inFlight.now);
      try {
        const text = await state.onCall(request.params.name, request.params.arguments ?? {});
        return { content: [{ type: "text" as const, text }] };
      } finally {
        state.inFlight.now -= 1;
      }
    });
    return server;
  };
  const http: HttpServer = createServer(async (req, res) => {
    state.headers.push(req.headers);
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    // Stateless: one server and transport per request, as the SDK's examples do.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = mcpServer();
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  state.stop = () =>
    new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    });
  return state;
}
