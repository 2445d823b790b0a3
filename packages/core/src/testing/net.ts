/**
 * Test support for the network guard's tests (not exported from the package): a
 * local HTTP server with the routes the tests need, and a trap that makes any
 * connection to an address outside loopback throw instead of leaving the machine,
 * so that even a broken guard cannot send traffic out during a test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isIP, Socket } from "node:net";
import { vi } from "vitest";

export interface TestServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** Requests received, in order. */
  requests: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[];
  close(): Promise<void>;
}

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const ROUTES: Record<string, Route> = {
  "/echo": (req, res, body) => json(res, 200, { method: req.method, headers: req.headers, body }),
  "/text": (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("plain words");
  },
  "/redirect": (req, res) => {
    const to = new URL(req.url ?? "", "http://x").searchParams.get("to") ?? "/echo";
    res.writeHead(Number(new URL(req.url ?? "", "http://x").searchParams.get("status") ?? 302), {
      location: to,
    });
    res.end();
  },
  "/loop": (_req, res) => {
    res.writeHead(302, { location: "/loop" });
    res.end();
  },
  // 2 MiB in chunks, without content-length, so the cap must count bytes as they come.
  "/big": (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = "x".repeat(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < 32) {
        sent++;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  },
  "/big-declared": (_req, res) => {
    res.writeHead(200, { "content-length": String(5 * 1024 * 1024) });
    res.write("x");
  },
  "/hang": () => {},
  "/status": (_req, res) => json(res, 404, { error: "no such thing" }),
};

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(value));
}

/** Starts the test server on 127.0.0.1 and an OS-chosen port. */
export async function startTestServer(): Promise<TestServer> {
  const requests: TestServer["requests"] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const route = ROUTES[new URL(req.url ?? "/", "http://x").pathname];
      if (route) route(req, res, body);
      else json(res, 404, { error: "unknown route" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function isLoopbackIp(address: string): boolean {
  return address === "::1" || /^127\.\d+\.\d+\.\d+$/.test(address);
}

type LookupCallback = (error: Error | null, address: unknown, family?: number) => void;
type Lookup = (hostname: string, options: unknown, callback: LookupCallback) => void;

/**
 * Makes every socket connection to an address outside loopback throw, also when
 * it comes out of a `lookup`, and records the host of every attempt. Restore
 * with `vi.restoreAllMocks()`.
 */
export function trapOutsideConnections(): { attempts: string[] } {
  const attempts: string[] = [];
  const original = Socket.prototype.connect;
  vi.spyOn(Socket.prototype, "connect").mockImplementation(function (
    this: Socket,
    ...args: unknown[]
  ) {
    // net.createConnection passes its normalized arguments as one array.
    const options = (Array.isArray(args[0]) ? args[0][0] : args[0]) as
      | { host?: string; lookup?: Lookup }
      | undefined;
    const host = options?.host ?? "localhost";
    attempts.push(host);
    if (isIP(host)) {
      if (!isLoopbackIp(host)) throw new Error(`test trap: a connection to ${host} was attempted`);
    } else if (options?.lookup) {
      const inner = options.lookup;
      options.lookup = (hostname, lookupOptions, callback) =>
        inner(hostname, lookupOptions, (error, address, family) => {
          const list = Array.isArray(address)
            ? (address as { address: string }[]).map((a) => a.address)
            : [String(address)];
          const outside = list.find((a) => !isLoopbackIp(a));
          if (!error && outside) {
            callback(new Error(`test trap: ${hostname} would connect to ${outside}`), "");
          } else callback(error, address, family);
        });
    } else if (host !== "localhost") {
      throw new Error(`test trap: ${host} would be resolved by the system resolver`);
    }
    return (original as (...a: unknown[]) => Socket).apply(this, args);
  });
  return { attempts };
}
