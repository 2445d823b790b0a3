/**
 * The stack an eval runs on when no URL is given: the local stack in this
 * process, as `npm start` runs it (embedded emulators, the same handlers), but
 * in memory, so a run leaves nothing behind and never meets a running
 * `npm start`'s data folder. Its model is the one the environment configures
 * (README, Configuration), or, scripted, the dataset's own answers.
 */
import { consoleLog, startLocalStack } from "@stackvm/local";
import { startScriptedLlm } from "../support/llm-server";
import { ApiClient } from "./api";
import type { EvalCase, Need } from "./dataset";
import { startFixtureServer } from "./fixture-server";
import { scriptFor } from "./scripted";

export interface EvalStack {
  api: ApiClient;
  /** The LLM the stack's banner names (null: none configured). */
  llm: Record<string, unknown> | null;
  fixtureUrl: string;
  available: Set<Need>;
  /** What the scripted model could not answer (scripted runs only). */
  unanswered: string[];
  /** Makes every scripted answer unused again, before the cases run in another planning mode. */
  resetScript(): void;
  stop(): Promise<void>;
}

/**
 * Starts the fixture server and the in-process stack. With `scripted`, a
 * scripted OpenAI-compatible server answers every case from its `scripted`
 * entries (the cases must be filled with the fixture URL, which `fill` does).
 */
export async function startEvalStack(options: {
  env: Record<string, string | undefined>;
  /** The cases to answer from their scripts, or none to use the configured model. */
  scripted?: (fixtureUrl: string) => EvalCase[];
  logLevel?: "debug" | "info" | "warn" | "error" | "silent";
}): Promise<EvalStack> {
  const fixture = await startFixtureServer();
  const script = options.scripted ? scriptFor(options.scripted(fixture.url)) : null;
  const llm = script ? await startScriptedLlm() : null;
  if (llm && script) llm.on(() => true, script.respond);
  const model = llm
    ? {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "scripted",
        LLM_MODEL: "scripted-model",
        REASON_LLM_MODEL: undefined,
        EVAL_LLM_MODEL: undefined,
        LLM_PROVIDER: "openai",
        EMBEDDING_PROVIDER: undefined,
        EMBEDDING_MODEL: "scripted-embedding",
      }
    : {};
  const stack = await startLocalStack({
    dataDir: null,
    port: 0,
    log: consoleLog({ level: options.logLevel ?? "error" }),
    concurrency: Number(options.env.STACKVM_WORKER_CONCURRENCY ?? 4),
    env: {
      ...options.env,
      ...model,
      // The eval polls every running case and may run many at once.
      STACKVM_RATE_LIMIT_RPS: "100000",
      STACKVM_MAX_RUNNING_TASKS: "1000",
      // The fixture server listens on loopback; nothing else of this machine is opened.
      STACKVM_OPEN_PRIVATE_RANGES: [options.env.STACKVM_OPEN_PRIVATE_RANGES, "127.0.0.1"]
        .filter(Boolean)
        .join(","),
    },
  });
  return {
    api: new ApiClient(stack.url, stack.apiKey),
    llm: stack.llm ? (JSON.parse(JSON.stringify(stack.llm)) as Record<string, unknown>) : null,
    fixtureUrl: fixture.url,
    available: new Set<Need>(["fixture_server"]),
    unanswered: script?.unanswered ?? [],
    resetScript: () => script?.reset(),
    async stop() {
      await stack.stop();
      await llm?.close();
      await fixture.close();
    },
  };
}
