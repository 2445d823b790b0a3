import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { SandboxRequest, SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FAKE_REQUEST_ID,
  type RuntimeApiFake,
  type RuntimeExchange,
  startRuntimeApiFake,
} from "./testing/runtime-api-fake";

// The data function's entry as Lambda runs it: its own runtime, against a
// loopback server that answers the Runtime API's documented requests. It runs
// as a user of its own (its sweep kills every other process of its user, so
// never as root, and never as a user another test's children use).
const ENTRY = join(import.meta.dirname, "sandbox-data.ts");
const RUNTIME_UID = 64_300;
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

let fake: RuntimeApiFake;
let port = 0;

beforeAll(async () => {
  fake = await startRuntimeApiFake();
  port = fake.port;
});

afterAll(async () => {
  await fake.close();
});

/** Starts the entry for one event and waits for it to exit. */
async function invokeOnce(event: unknown): Promise<RuntimeExchange> {
  const exchange = await fake.invokeOnce(
    [process.execPath, "--import", TSX, ENTRY],
    event,
    RUNTIME_UID,
  );
  if (exchange.posted.length === 0)
    throw new Error(`the runtime posted nothing: ${exchange.stderr}`);
  return exchange;
}

/** "gone" when the process is dead (absent, or a zombie waiting for its reaper), else its state. */
function liveState(pid: number): string {
  if (!existsSync(`/proc/${pid}`)) return "gone";
  try {
    const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return state === "Z" || state === "X" ? "gone" : `alive (${state})`;
  } catch {
    return "gone";
  }
}

const request = (code: string, extra: Partial<SandboxRequest> = {}): SandboxRequest => ({
  v: 1,
  language: "python",
  code,
  ...extra,
});

function answerOf(exchange: RuntimeExchange): SandboxResponse {
  expect(exchange.posted.map((p) => p.path)).toEqual([
    `/2018-06-01/runtime/invocation/${FAKE_REQUEST_ID}/response`,
  ]);
  return exchange.posted[0]?.body as SandboxResponse;
}

describe("the data function's runtime: one run per instance", () => {
  it("answers a pandas run, kills what the run left behind before answering, and exits", async () => {
    const exchange = await invokeOnce(
      request(
        [
          "import pandas as pd, subprocess",
          "stray = subprocess.Popen(['sleep', '300'], start_new_session=True)",
          "df = pd.DataFrame({'a': ['x', 'y', 'x'], 'b': [1, 2, 3]})",
          "{'means': df.groupby('a')['b'].mean().to_dict(), 'stray': stray.pid}",
        ].join("\n"),
      ),
    );
    const answer = answerOf(exchange);
    expect(answer.error).toBeNull();
    const result = answer.result as { means: Record<string, number>; stray: number };
    expect(result.means).toEqual({ x: 2, y: 2 });
    // The sweep ran before the answer: the run's setsid process is gone.
    expect(liveState(result.stray)).toBe("gone");
    expect(exchange.nextCalls).toBe(1);
    expect(exchange.exitCode).toBe(0);
  });

  it("runs under its own seccomp filter: ptrace and internet sockets (the Runtime API) refused", async () => {
    const exchange = await invokeOnce(
      request(
        [
          "import numpy, ctypes, socket",
          "libc = ctypes.CDLL(None, use_errno=True)",
          "out = {'ptrace': [libc.syscall(101, 0, 0, 0, 0), ctypes.get_errno()]}",
          "try:",
          `    socket.create_connection(('127.0.0.1', ${port}), timeout=2).close()`,
          "    out['runtime_api'] = 'reached'",
          "except OSError as error:",
          "    out['runtime_api'] = error.errno",
          "out['unix'] = socket.socketpair()[0].family.name",
          "out",
        ].join("\n"),
      ),
    );
    const answer = answerOf(exchange);
    expect(answer.error).toBeNull();
    expect(answer.result).toEqual({ ptrace: [-1, 1], runtime_api: 1, unix: "AF_UNIX" });
    expect(exchange.nextCalls).toBe(1);
  });

  it("answers each limit with its own error, and still exits after the one run", async () => {
    const timeout = answerOf(
      await invokeOnce(
        request("import numpy\nwhile True:\n    pass", { limits: { time_ms: 500 } }),
      ),
    );
    expect(timeout.error?.code).toBe("timeout");
    const memory = answerOf(
      await invokeOnce(
        request("import numpy\nx = numpy.ones(1 << 30, dtype='uint8')\nx.sum()", {
          limits: { memory_mib: 64 },
        }),
      ),
    );
    expect(memory.error?.code).toBe("memory_limit");
    const output = await invokeOnce(
      request("import numpy\nwhile True:\n    print('x' * 1000)", {
        limits: { output_bytes: 4096 },
      }),
    );
    expect(answerOf(output).error?.code).toBe("output_limit");
    expect(output.nextCalls).toBe(1);
    expect(output.exitCode).toBe(0);
  });

  it("refuses code that is not for the data engine, naming the function that runs it", async () => {
    const answer = answerOf(await invokeOnce({ v: 1, language: "javascript", code: "1 + 1" }));
    expect(answer.error?.code).toBe("refused");
    expect(answer.error?.message).toMatch(/sandbox function/);
  });
});
