/**
 * The MCP "everything" reference server (`@modelcontextprotocol/server-everything`,
 * written by the MCP project, not here) in Streamable HTTP mode, on 127.0.0.1 and
 * a port of its own, in the test's process: its launcher would listen on every
 * interface. The glue is the package's own `streamableHttp` transport file, cut to
 * POST and DELETE with one session per client. It can be stopped and started
 * again on the same port, and records the headers of every request and each
 * `tools/call`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
// biome-ignore lint/suspicious/noTsIgnore: the package ships JavaScript without types for this path
// @ts-ignore
import { createServer as createEverything } from "@modelcontextprotocol/server-everything/dist/server/index.js";

export interface EverythingServer {
  url: string;
  /** The headers of every request received, in order. */
  headers: IncomingHttpHeaders[];
  /** Every `tools/call` received, in order: the tool and the request's idempotency key. */
  calls: Array<{ tool: string; idempotencyKey: string | undefined }>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startEverything(): Promise<EverythingServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const headers: IncomingHttpHeaders[] = [];
  const calls: EverythingServer["calls"] = [];
  let port = 0;
  let server: Server | null = null;

  const listen = async () => {
    const http = createServer(async (req, res) => {
      headers.push(req.headers);
      // Read here to record tools/call; the transport takes the parsed body.
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString("utf8");
      const body: unknown = text ? JSON.parse(text) : undefined;
      for (const m of Array.isArray(body) ? body : [body]) {
        const rpc = m as { method?: string; params?: { name?: string } } | undefined;
        if (rpc?.method === "tools/call")
          calls.push({
            tool: String(rpc.params?.name),
            idempotencyKey: req.headers["idempotency-key"] as string | undefined,
          });
      }
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      if (req.method === "POST" && !sessionId) {
        const { server: mcp } = createEverything();
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, transport);
          },
        });
        await mcp.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        res.writeHead(400, { "content-type": "application/json" }).end('{"error":"no session"}');
        return;
      }
      await transport.handleRequest(req, res, body);
    });
    await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
    port = (http.address() as AddressInfo).port;
    server = http;
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    calls,
    async stop() {
      const http = server;
      server = null;
      if (!http) return;
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      transports.clear();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
    async start() {
      if (!server) await listen();
    },
  };
}
