/**
 * The whole local stack for system tests: emulators in memory on ephemeral ports,
 * the API on a free port, a scripted OpenAI-compatible LLM server, and a small
 * client that speaks to the API with `fetch` as an integrator would.
 */
import {
  consoleLog,
  type LocalStack,
  type LocalStackOptions,
  startLocalStack,
} from "@stackvm/local";
import { type LocalTestHooks, splitTestHooks } from "@stackvm/local/testing";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { type ScriptedLlm, type StreamOptions, startScriptedLlm } from "./llm-server";

export interface TestStack {
  stack: LocalStack;
  llm: ScriptedLlm;
  url: string;
  apiKey: string;
  /** `fetch` against the API with the bootstrap key (or `key`), JSON in and out. */
  api(
    method: string,
    path: string,
    body?: unknown,
    options?: { key?: string | null; headers?: Record<string, string>; raw?: string },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** Polls the task until it reaches a terminal status (or the timeout). */
  waitForTask(taskId: string, options?: { key?: string; timeoutMs?: number }): Promise<any>;
  stop(): Promise<void>;
}

export const ADMIN_KEY = "admin-key-for-tests-0123456789";

type Env = Record<string, string | undefined>;

export async function startTestStack(
  /** `env` may be made from the scripted LLM (its `bedrockUrl`, say). */
  options: Partial<Omit<LocalStackOptions, "env">> &
    LocalTestHooks & {
      env?: Env | ((llm: ScriptedLlm) => Env);
      /** How the scripted LLM streams (`llm.streaming` changes it for one test). */
      streaming?: StreamOptions;
    } = {},
): Promise<TestStack> {
  const { streaming, ...given } = options;
  const { hooks, rest } = splitTestHooks(given);
  const llm = await startScriptedLlm(streaming);
  const env = typeof options.env === "function" ? options.env(llm) : options.env;
  const stack = await startLocalStack(
    {
      dataDir: null,
      port: 0,
      log: consoleLog({ level: (process.env.TEST_LOG_LEVEL as never) ?? "silent" }),
      concurrency: 4,
      visibilityTimeoutSeconds: 5,
      ...rest,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "test-key",
        LLM_MODEL: "scripted-model",
        LLM_TIMEOUT_MS: "2000",
        STACKVM_ADMIN_KEY: ADMIN_KEY,
        // Tests poll hard and start many tasks at once; the quota tests lower these per tenant.
        STACKVM_RATE_LIMIT_RPS: "100000",
        STACKVM_MAX_RUNNING_TASKS: "1000",
        // The operator's opt-in a developer gives to call servers on this machine:
        // tests run their MCP, HTTP-tool and webhook servers on loopback. The
        // stack's own ports stay refused (test/system/tenant-walls.test.ts).
        STACKVM_OPEN_PRIVATE_RANGES: "127.0.0.0/8,::1",
        ...env,
      },
    },
    // Booting Pyodide at start (a snapshot, a calibration child, a warm child) is
    // seconds of CPU per stack, for the few test files whose stack runs Python:
    // they ask for it; the others' first Python run would boot it.
    { warmPython: false, ...hooks },
  );
  const api: TestStack["api"] = async (method, path, body, opts = {}) => {
    const key = opts.key === undefined ? stack.apiKey : opts.key;
    const response = await fetch(`${stack.url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined || opts.raw !== undefined
          ? { "content-type": "application/json" }
          : {}),
        ...opts.headers,
      },
      ...(opts.raw !== undefined
        ? { body: opts.raw }
        : body !== undefined
          ? { body: JSON.stringify(body) }
          : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const waitForTask: TestStack["waitForTask"] = async (taskId, opts = {}) => {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    for (;;) {
      const { status, body } = await api("GET", `/v1/tasks/${taskId}`, undefined, {
        key: opts.key ?? stack.apiKey,
      });
      if (status !== 200) throw new Error(`GET task answered ${status}: ${JSON.stringify(body)}`);
      if (["completed", "failed", "cancelled"].includes(body.status)) return body;
      if (Date.now() > deadline) {
        throw new Error(`task ${taskId} did not finish in time: ${JSON.stringify(body)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    stack,
    llm,
    url: stack.url,
    apiKey: stack.apiKey,
    api,
    waitForTask,
    async stop() {
      await stack.stop();
      await llm.close();
    },
  };
}

/**
 * One stack for a test file: started before its tests, stopped after them, the
 * scripted LLM's answers cleared before each (a file's own `beforeEach`, declared
 * after this call, runs after the reset). The object is filled when the stack starts.
 *
 * @example
 * const t = useTestStack();
 * it("runs", async () => expect((await t.api("GET", "/healthz")).status).toBe(200));
 */
export function useTestStack(options: Parameters<typeof startTestStack>[0] = {}): TestStack {
  const handle = {} as TestStack;
  beforeAll(async () => {
    Object.assign(handle, await startTestStack(options));
  });
  afterAll(async () => {
    await handle.stop?.();
  });
  beforeEach(() => {
    handle.llm.reset();
  });
  return handle;
}
