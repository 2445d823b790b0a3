/**
 * A loopback stand-in for Lambda's Runtime API (2018-06-01), for tests of a
 * runtime that serves one invocation (`lambda-runtime-once.ts`): it hands out
 * one event on `GET /runtime/invocation/next` (a second `next` is held, never
 * answered), records what the runtime posts, and runs the runtime as a
 * process, the way Lambda starts an image's entry, until it exits.
 */
import { spawn } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What happened in one invocation. */
export interface RuntimeExchange {
  posted: { path: string; body: unknown; headers: IncomingMessage["headers"] }[];
  nextCalls: number;
  exitCode: number | null;
  stderr: string;
}

export interface RuntimeApiFake {
  port: number;
  /** Runs `command` (as `uid`, in a private TMPDIR) for one event and waits for its exit. */
  invokeOnce(command: string[], event: unknown, uid: number): Promise<RuntimeExchange>;
  close(): Promise<void>;
}

/** The request id the fake hands out. */
export const FAKE_REQUEST_ID = "req-1";

export async function startRuntimeApiFake(): Promise<RuntimeApiFake> {
  let pending: { event: unknown; exchange: RuntimeExchange } | null = null;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const current = pending;
      if (!current) {
        res.writeHead(500).end();
        return;
      }
      if (req.method === "GET" && req.url === "/2018-06-01/runtime/invocation/next") {
        current.exchange.nextCalls += 1;
        if (current.exchange.nextCalls > 1) return; // no second run: held open
        res.writeHead(200, {
          "content-type": "application/json",
          "lambda-runtime-aws-request-id": FAKE_REQUEST_ID,
          "lambda-runtime-deadline-ms": String(Date.now() + 60_000),
        });
        res.end(JSON.stringify(current.event));
        return;
      }
      current.exchange.posted.push({
        path: req.url ?? "",
        body: body ? JSON.parse(body) : null,
        headers: req.headers,
      });
      res.writeHead(202, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    port,
    async invokeOnce(command, event, uid) {
      const exchange: RuntimeExchange = { posted: [], nextCalls: 0, exitCode: null, stderr: "" };
      pending = { event, exchange };
      const tmp = mkdtempSync(join(tmpdir(), "stackvm-runtime-"));
      chownSync(tmp, uid, uid);
      chmodSync(tmp, 0o700);
      try {
        const [file, ...args] = command as [string, ...string[]];
        const child = spawn(file, args, {
          uid,
          gid: uid,
          stdio: ["ignore", "ignore", "pipe"],
          env: {
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            TMPDIR: tmp,
            AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`,
            AWS_LAMBDA_FUNCTION_NAME: "SandboxData",
            AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "2048",
          },
        });
        child.stderr?.on("data", (chunk) => {
          exchange.stderr = (exchange.stderr + chunk).slice(-8192);
        });
        exchange.exitCode = await new Promise<number | null>((resolve) => {
          const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
          child.on("exit", (code) => {
            clearTimeout(timer);
            resolve(code);
          });
        });
        return exchange;
      } finally {
        pending = null;
        rmSync(tmp, { recursive: true, force: true });
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
