/**
 * How the project reads a real llama.cpp server at its limits: a prompt past the
 * server's context (measured before sending, and the server's own 400), an
 * answer stopped at its output limit, a server too slow for the call's time
 * limit, one that is gone, one that serves no embeddings, and `doctor` against a
 * server with no output cap of its own. The server is started with a small
 * context (`-c 512`) and no `-n`: every bound here is the project's.
 */
import { createLlmSession, LlmConfig, type LlmPort, type SandboxPort } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAiEmbeddings } from "../../packages/aws/src/openai-embeddings";
import { OpenAiLlm } from "../../packages/aws/src/openai-llm";
import { PlanAnswer } from "../../packages/core/src/planning/planner";
import { createDoctor } from "../../packages/local/src/doctor";
import {
  LLAMA_START_TIMEOUT_MS,
  type LlamaServer,
  startLlamaServer,
} from "../support/llama-server";

let llama: LlamaServer;
beforeAll(async () => {
  llama = await startLlamaServer({ contextSize: 512 });
}, LLAMA_START_TIMEOUT_MS);
afterAll(() => llama?.stop());

/** A port that counts the requests that reached it (and keeps the adapter's context probe). */
function counted(port: OpenAiLlm) {
  const counter = { requests: 0 };
  const wrapped: LlmPort = {
    complete: (request) => {
      counter.requests++;
      return port.complete(request);
    },
    contextTokens: (model) => port.contextTokens(model),
  };
  return { counter, port: wrapped };
}

function config(extra: Partial<LlmConfig> = {}) {
  return LlmConfig.parse({
    models: { default: llama.model, reason: llama.model, eval: llama.model },
    timeoutMs: 60_000,
    maxAttempts: 2,
    repairRounds: 0,
    ...extra,
  });
}

/** Some 1,500 tokens of prose: three times the server's context. */
const LONG = Array.from({ length: 300 }, (_, i) => `Sentence ${i} of the goal.`).join(" ");

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ code: "none", message: "" }),
    (error: { code?: string; message?: string }) => ({
      code: error.code,
      message: error.message ?? "",
    }),
  );

describe("a real llama.cpp server at its limits", () => {
  it("refuses a prompt past the server's context before sending it: llm_context_exceeded, with the setting", async () => {
    const { counter, port } = counted(new OpenAiLlm({ apiKey: "none", baseURL: llama.url }));
    const session = createLlmSession({ port, config: config(), budget: {} });
    const outcome = await codeOf(
      session.json({
        purpose: "plan",
        role: "reason",
        schemaName: "plan",
        schema: PlanAnswer,
        messages: [{ role: "user", content: LONG }],
      }),
    );
    expect(outcome.code).toBe("llm_context_exceeded");
    // The context came from the server (llama.cpp's /props): nothing was sent.
    expect(outcome.message).toContain("512");
    expect(outcome.message).toContain("LLM_CONTEXT_TOKENS");
    expect(counter.requests).toBe(0);
  });

  it("reads the server's own overflow 400 as llm_context_exceeded, not retried", async () => {
    const llm = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
    const outcome = await codeOf(
      llm.complete({
        model: llama.model,
        messages: [{ role: "user", content: LONG }],
        timeoutMs: 60_000,
      }),
    );
    expect(outcome.code).toBe("llm_context_exceeded");
    expect(outcome.message).toMatch(/exceeds the available context size \(512 tokens\)/);
  });

  it("names an answer stopped at its output limit llm_output_cut_off", async () => {
    const { counter, port } = counted(new OpenAiLlm({ apiKey: "none", baseURL: llama.url }));
    const session = createLlmSession({ port, config: config(), budget: {} });
    const outcome = await codeOf(
      session.json({
        purpose: "plan",
        role: "reason",
        schemaName: "plan",
        schema: PlanAnswer,
        messages: [{ role: "user", content: "Plan." }],
        // A plan cannot close its JSON in 6 tokens: the grammar forces `{"reasoning": "`.
        maxOutputTokens: 6,
      }),
    );
    expect(outcome.code).toBe("llm_output_cut_off");
    expect(counter.requests).toBe(1);
  });

  it("reads a server too slow for the call's limit as llm_timeout, never as unreachable", async () => {
    const llm = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
    const outcome = await codeOf(
      llm.complete({
        model: llama.model,
        messages: [{ role: "user", content: "Write at length." }],
        // The grammar holds the answer open for 300 characters (a token each), so
        // the model cannot end it early. Left free, it ends after some 24 tokens,
        // in 5 to 10 ms on a 2-core machine: about the limit, so the call
        // sometimes passed. Held open, it runs 80 to 100 ms.
        jsonSchema: {
          name: "long",
          schema: {
            type: "object",
            properties: { text: { type: "string", minLength: 300 } },
            required: ["text"],
          },
        },
        maxOutputTokens: 400,
        timeoutMs: 5,
      }),
    );
    expect(outcome.code).toBe("llm_timeout");
    expect(outcome.message).not.toMatch(/could not be reached/);
  });

  it("reads a server that is gone as llm_unreachable", async () => {
    const gone = await startLlamaServer({ contextSize: 256 });
    await gone.stop();
    const llm = new OpenAiLlm({ apiKey: "none", baseURL: gone.url });
    const outcome = await codeOf(
      llm.complete({
        model: gone.model,
        messages: [{ role: "user", content: "hi" }],
        timeoutMs: 10_000,
      }),
    );
    expect(outcome.code).toBe("llm_unreachable");
  });

  it("takes the server's 501 for embeddings (no --embeddings) as permanent, quoting it", async () => {
    const embeddings = new OpenAiEmbeddings({ apiKey: "none", baseURL: llama.url });
    const error = (await embeddings
      .embed({ model: llama.model, input: ["x"], timeoutMs: 10_000 })
      .catch((e: unknown) => e)) as { code?: string; message?: string; retryable?: boolean };
    expect(error.code).toBe("embedding_failed");
    expect(error.message).toContain("501");
    expect(error.message).toMatch(/--embeddings/);
  });

  it("passes doctor's model check on a server with no output cap, and points at --embeddings", async () => {
    const sandbox = { run: async () => ({ result: 42, error: null }) } as unknown as SandboxPort;
    const doctor = createDoctor({
      llm: new OpenAiLlm({ apiKey: "none", baseURL: llama.url }),
      embeddings: new OpenAiEmbeddings({ apiKey: "none", baseURL: llama.url }),
      sandbox,
      llmConfig: config(),
      embeddingModel: llama.model,
      baseURL: llama.url,
    });
    const { checks } = await doctor();
    // Unbounded, "reply with ok" would run to the end of the context (finding 1).
    expect(checks.find((c) => c.name === "llm")).toMatchObject({ status: "ok", fix: null });
    const embeddings = checks.find((c) => c.name === "embeddings");
    expect(embeddings?.status).toBe("warning");
    expect(embeddings?.fix).toMatch(/--embeddings/);
  });
});
