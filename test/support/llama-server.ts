/**
 * A real llama.cpp `llama-server` on loopback for tests, serving the tiny
 * random-weights model (`llama/tiny-model.ts`): the project's own OpenAI adapters
 * talk to it as they would to a user's local model. The binary is built from
 * node-llama-cpp's bundled source the first time (`llama/build.ts`; `npm test`
 * does it in `pretest`), then cached.
 *
 * The model's answers are noise. Tests through it assert what the server accepts
 * and how the project reads its answers and refusals, never what it says.
 *
 * @example
 * const llama = await startLlamaServer({ contextSize: 2048, embeddings: true });
 * const llm = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
 * // ...
 * await llama.stop();
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { ensureLlamaServer } from "./llama/build";
import { ensureTinyModel, TINY_MODEL } from "./llama/tiny-model";

/** How to start the server. */
export interface LlamaServerOptions {
  /** `-c`: the context size in tokens, shared by the slots (default 4096). */
  contextSize?: number;
  /** `--embeddings --pooling mean`: serve `/v1/embeddings` (default off, as llama-server's). */
  embeddings?: boolean;
  /** `-np`: parallel slots (default 1). */
  parallel?: number;
  /** `-n`: the server's own output limit per request (default: none, -1). */
  maxOutputTokens?: number;
  /** More flags, as llama-server takes them. */
  args?: string[];
}

/** A running server. */
export interface LlamaServer {
  /** The OpenAI base URL, ending in `/v1`: give it as `baseURL` / `OPENAI_BASE_URL`. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`, for llama.cpp's own routes (`/health`, `/props`). */
  readonly origin: string;
  /** The model name the server lists and answers with (`--alias`). */
  readonly model: string;
  /** The context size it was started with. */
  readonly contextSize: number;
  /** The last lines the server logged, for a failing test's message. */
  logs(): string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s); safe to call twice. */
  stop(): Promise<void>;
}

/**
 * A `beforeAll` timeout for starting the server: seconds when it is cached, but the
 * first run on a fresh clone builds it (minutes, longer on a loaded machine) unless
 * `pretest` already did.
 */
export const LLAMA_START_TIMEOUT_MS = 45 * 60_000;

/** The name the tiny model is served under. */
export const TINY_MODEL_ALIAS = "tiny-llama";

/** Starts llama-server on a free loopback port and waits until `/health` answers 200. */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const [{ server: binary }, model] = await Promise.all([ensureLlamaServer(), ensureTinyModel()]);
  const contextSize = options.contextSize ?? 4096;
  // The port is chosen free, then given to the server: another process may take
  // it in between, so a server that cannot bind is started again on another.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [
      "--model",
      model,
      "--alias",
      TINY_MODEL_ALIAS,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--ctx-size",
      String(contextSize),
      "--parallel",
      String(options.parallel ?? 1),
      // One thread each: the machine runs many test files at once, and the tiny
      // model needs no more.
      "--threads",
      "1",
      "--threads-batch",
      "1",
      "--no-warmup",
      "--no-webui",
      "--jinja",
      // No prompt cache kept in RAM across requests: each test starts clean.
      "--cache-ram",
      "0",
      "--seed",
      String(TINY_MODEL.seed),
      ...(options.maxOutputTokens === undefined
        ? []
        : ["--n-predict", String(options.maxOutputTokens)]),
      ...(options.embeddings ? ["--embeddings", "--pooling", "mean"] : []),
      ...(options.args ?? []),
    ];
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    const log = ringLog(child);
    const origin = `http://127.0.0.1:${port}`;
    try {
      await waitHealthy(origin, child, log);
    } catch (error) {
      lastError = error;
      await stopChild(child);
      if (/bind|address already in use/i.test(log.text())) continue;
      throw error;
    }
    const stop = once(() => stopChild(child));
    process.once("exit", () => child.kill("SIGKILL"));
    return {
      url: `${origin}/v1`,
      origin,
      model: TINY_MODEL_ALIAS,
      contextSize,
      logs: log.text,
      stop,
    };
  }
  throw lastError;
}

/** Polls `/health` (503 while the model loads) until 200, the process dies, or 60 s pass. */
async function waitHealthy(origin: string, child: ChildProcess, log: RingLog): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `llama-server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${log.text()}`,
      );
    }
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((wake) => setTimeout(wake, 100));
  }
  throw new Error(`llama-server did not become healthy within 60 s:\n${log.text()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

interface RingLog {
  text(): string;
}

/** Keeps the last 8 KB the server wrote (it logs to stderr). */
function ringLog(child: ChildProcess): RingLog {
  let text = "";
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { text: () => text };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
}
