import { createServer, type Server } from "node:net";
import { SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSandbox } from "./sandbox-invoker";

// The real stand-in: the sandbox handler in its own process, in a network
// namespace (this machine runs the tests as root, so one can be made).
let sandbox: LocalSandbox;
let server: Server;
let port = 0;
let connections = 0;
const SECRET = "local-sandbox-secret-777";

beforeAll(async () => {
  process.env.STACKVM_LOCAL_SANDBOX_TEST_SECRET = SECRET;
  server = createServer((socket) => {
    connections++;
    socket.end("hi");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
  sandbox = new LocalSandbox({ ceiling: { time_ms: 6_000 }, log: () => {} });
});

afterAll(async () => {
  delete process.env.STACKVM_LOCAL_SANDBOX_TEST_SECRET;
  await sandbox.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("LocalSandbox", () => {
  it("runs JavaScript through the sandbox handler and answers the protocol", async () => {
    const answer = await sandbox.run({
      v: 1,
      language: "javascript",
      code: "x * 2",
      inputs: { x: 21 },
    });
    expect(SandboxResponse.parse(answer)).toEqual(answer);
    expect(answer.result).toBe(42);
  });

  it("runs Python with the function's ceiling on every limit", async () => {
    const answer = await sandbox.run({
      v: 1,
      language: "python",
      code: "sum(range(10))",
      limits: { time_ms: 60_000 },
    });
    expect(answer.error).toBeNull();
    expect(answer.result).toBe(45);
    expect(answer.limits.time_ms).toBe(6_000);
  });

  it("gives the sandbox none of the stack's environment", async () => {
    const answer = await sandbox.run({
      v: 1,
      language: "python",
      code: "import os\nsorted(k for k in os.environ if 'STACKVM' in k)",
    });
    expect(answer.result).toEqual([]);
    expect(JSON.stringify(answer)).not.toContain(SECRET);
  });

  it("runs the sandbox without the host's network", async () => {
    const answer = await sandbox.run({
      v: 1,
      language: "python",
      code: `import socket\nsocket.create_connection(('127.0.0.1', ${port}), timeout=2).recv(2)`,
    });
    expect(answer.error?.code).toBe("runtime_error");
    expect(connections).toBe(0);
  });

  it("answers a bad request with invalid_request", async () => {
    const answer = await sandbox.run({ v: 1, language: "javascript", code: "" });
    expect(answer.error?.code).toBe("invalid_request");
  });

  it("runs requests side by side", async () => {
    const answers = await Promise.all(
      [1, 2, 3].map((n) => sandbox.run({ v: 1, language: "javascript", code: `${n} * 10` })),
    );
    expect(answers.map((a) => a.result)).toEqual([10, 20, 30]);
  });
});
