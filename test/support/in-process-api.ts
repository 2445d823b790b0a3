/**
 * The API app of a whole system over the in-memory adapters, in this process:
 * for tests that send requests through every middleware and route
 * (`app.request`) without starting a stack. Its LLM answers "ok" to anything,
 * it has no sandbox, and no worker drains its queue: a task it starts stays
 * queued unless the test runs its steps.
 */
import { createApp } from "@stackvm/api";
import type { ItemStore, LlmPort, Log, SandboxPort } from "@stackvm/core";
import { silentLog, systemClock } from "@stackvm/core";
import { MemoryBlobs, MemoryItemStore, MemoryQueue } from "@stackvm/core/testing";
import { createSystem, loadConfig, systemOptions } from "@stackvm/functions";

const answersOk: LlmPort = {
  async complete(request) {
    return { text: "ok", model: request.model, inputTokens: 1, outputTokens: 1 };
  },
};

const noSandbox: SandboxPort = {
  run: async () => {
    throw new Error("no sandbox here");
  },
};

export interface InProcessApiOptions {
  /** Settings over the defaults (an LLM configured, a rate limit no test reaches). */
  env?: Record<string, string>;
  log?: Log;
  items?: ItemStore;
  blobs?: MemoryBlobs;
}

/** A system and its API app; `env` as the functions read it. */
export function inProcessApi(options: InProcessApiOptions = {}) {
  const config = loadConfig({
    AWS_REGION: "us-east-1",
    STACKVM_TABLE: "stackvm",
    STACKVM_QUEUE_URL: "memory://steps",
    STACKVM_DLQ_URL: "memory://steps-dlq",
    STACKVM_BUCKET: "stackvm-blobs",
    OPENAI_API_KEY: "test",
    LLM_MODEL: "test-model",
    STACKVM_RATE_LIMIT_RPS: "100000",
    ...options.env,
  });
  const system = createSystem(
    {
      items: options.items ?? new MemoryItemStore(),
      blobs: options.blobs ?? new MemoryBlobs(),
      queue: new MemoryQueue({ visibilityTimeoutSeconds: 60 }),
      clock: systemClock,
      sandbox: noSandbox,
      llm: answersOk,
    },
    systemOptions(config, options.log ?? silentLog, true),
  );
  return { app: createApp(system.api), system };
}
