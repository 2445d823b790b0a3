import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAiLlm } from "../../packages/aws/src/openai-llm";
import {
  LLAMA_START_TIMEOUT_MS,
  type LlamaServer,
  startLlamaServer,
} from "../support/llama-server";

describe("the real llama.cpp server (test support)", () => {
  let llama: LlamaServer;
  beforeAll(async () => {
    llama = await startLlamaServer({ contextSize: 1024 });
  }, LLAMA_START_TIMEOUT_MS);
  afterAll(() => llama?.stop());

  it("serves the tiny model on loopback and lists it with its context", async () => {
    const models = (await (await fetch(`${llama.url}/models`)).json()) as {
      data: Array<{
        id: string;
        meta?: { n_ctx?: number; n_ctx_train?: number; n_params?: number };
      }>;
    };
    expect(models.data[0]?.id).toBe("tiny-llama");
    // The context it runs with (-c, one slot), which the project reads, and the one it was made for.
    expect(models.data[0]?.meta?.n_ctx).toBe(1024);
    expect(models.data[0]?.meta?.n_ctx_train).toBe(32768);
    expect(models.data[0]?.meta?.n_params).toBeGreaterThan(100_000);
    expect(models.data[0]?.meta?.n_params).toBeLessThan(1_000_000);
  });

  it("answers a chat completion through the project's OpenAI adapter", async () => {
    const llm = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
    const answer = await llm.complete({
      model: llama.model,
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "Say hello — in any language, naïvely." },
      ],
      maxOutputTokens: 8,
      timeoutMs: 30_000,
    });
    expect(typeof answer.text).toBe("string");
    expect(answer.model).toBe("tiny-llama");
    expect(answer.inputTokens).toBeGreaterThan(10);
    expect(answer.outputTokens).toBeGreaterThan(0);
    expect(answer.outputTokens).toBeLessThanOrEqual(8);
    expect(["stop", "length"]).toContain(answer.finishReason);
  });

  it("stops the server when asked", async () => {
    const other = await startLlamaServer({ contextSize: 256 });
    await other.stop();
    await expect(fetch(`${other.origin}/health`)).rejects.toThrow();
  });
});
