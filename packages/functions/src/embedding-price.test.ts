/**
 * A local embedding is not priced as OpenAI's: a server on loopback or a
 * private network that answers to `text-embedding-3-small` (the default name)
 * costs nothing, unless the operator priced the model (`LLM_PRICES`). Through
 * the real OpenAI adapter against the scripted server on loopback.
 */
import { createEmbedder, LlmConfig } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { OpenAiEmbeddings } from "../../aws/src/openai-embeddings";
import { loadConfig } from "./config";

const env = {
  STACKVM_TABLE: "t",
  STACKVM_BUCKET: "b",
  STACKVM_QUEUE_URL: "http://localhost:9324/queue/q",
  LLM_MODEL: "m",
};

let server: ScriptedLlm;
beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());

describe("the price of an embedding", () => {
  it.each([
    ["http://127.0.0.1:8080/v1", true],
    ["http://localhost:11434/v1", true],
    ["http://10.0.0.7:8000/v1", true],
    ["https://api.openai.com/v1", false],
  ])("knows %s local: %s", (url, local) => {
    const config = loadConfig({ ...env, OPENAI_BASE_URL: url });
    expect(config.knowledge.embeddingsLocal).toBe(local);
  });

  function embedder(local: boolean, prices = {}) {
    const llm = LlmConfig.parse({ models: { default: "m", reason: "m", eval: "m" }, prices });
    return createEmbedder({
      port: new OpenAiEmbeddings({ apiKey: "sk-test", baseURL: server.url }),
      model: "text-embedding-3-small",
      llm,
      local,
    });
  }

  it("costs nothing from a local server that answers to OpenAI's name", async () => {
    const { calls } = await embedder(true).embed(["Kyoto temples"]);
    expect(calls).toEqual([expect.objectContaining({ purpose: "embedding", cost_usd: 0 })]);
    expect(calls[0]?.input_tokens).toBeGreaterThan(0);
  });

  it("is OpenAI's list price from a server that is not local, and the operator's price from any", async () => {
    const hosted = await embedder(false).embed(["Kyoto temples"]);
    expect(hosted.calls[0]?.cost_usd).toBeGreaterThan(0);
    const priced = await embedder(true, {
      "text-embedding-3-small": { input: 1, output: 0 },
    }).embed(["Kyoto temples"]);
    expect(priced.calls[0]?.cost_usd).toBeGreaterThan(0);
  });
});
