import { afterEach, describe, expect, it, vi } from "vitest";

/** What every function's configuration needs; the worker adds its knowledge function. */
const base = {
  STACKVM_TABLE: "t",
  STACKVM_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/steps.fifo",
  STACKVM_BUCKET: "b",
  AWS_REGION: "us-east-1",
};

describe("the worker's Lambda entry", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  const stub = (env: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  };

  it("refuses to start without the knowledge function, naming the setting and who sets it", async () => {
    stub({ ...base, STACKVM_KNOWLEDGE_FUNCTION: undefined });
    await expect(import("./worker")).rejects.toThrow(
      /STACKVM_KNOWLEDGE_FUNCTION is not set.*infra\/knowledge\.ts/,
    );
  });

  it("builds its step system from the environment, calling nothing at start", async () => {
    stub({ ...base, STACKVM_KNOWLEDGE_FUNCTION: "stackvm-knowledge" });
    const worker = await import("./worker");
    expect(typeof worker.handler).toBe("function");
  });
});
