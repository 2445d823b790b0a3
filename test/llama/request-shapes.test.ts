/**
 * Every request shape the project sends, accepted by a real llama.cpp server:
 * each structured output the core asks for (`response_format: json_schema`, with
 * the schema the session generates), `json_object`, `max_completion_tokens`, the
 * OpenAI streaming the token relay reads, and `/v1/embeddings`, all through the
 * project's own adapters (`OpenAiLlm`, `OpenAiEmbeddings`) and LLM session.
 *
 * The model is a tiny one with random weights: nothing here asserts what it says,
 * only that the server took the request and how the project read the answer.
 */
import {
  createLlmSession,
  LlmConfig,
  type LlmPort,
  type LlmRequest,
  type LlmResponse,
} from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as z from "zod";
import { OpenAiEmbeddings } from "../../packages/aws/src/openai-embeddings";
import { OpenAiLlm } from "../../packages/aws/src/openai-llm";
import { KnowledgeGraph } from "../../packages/core/src/knowledge/model";
import { PlanAnswer, PlanUpdateAnswer } from "../../packages/core/src/planning/planner";
import { EvaluationAnswer } from "../../packages/core/src/service/evaluation";
import { CodeAnswer } from "../../packages/core/src/tools/code-task-run";
import { JmpCondition } from "../../packages/core/src/vm/execute";
import {
  LLAMA_START_TIMEOUT_MS,
  type LlamaServer,
  startLlamaServer,
} from "../support/llama-server";

let llama: LlamaServer;
beforeAll(async () => {
  // Two slots: the session's calls and the embeddings may overlap.
  llama = await startLlamaServer({ contextSize: 4096, parallel: 2, embeddings: true });
}, LLAMA_START_TIMEOUT_MS);
afterAll(() => llama?.stop());

/** The port as the session calls it, with each request and what came of it kept. */
function recording(port: LlmPort) {
  const seen: Array<{ request: LlmRequest; response?: LlmResponse; error?: unknown }> = [];
  const wrapped: LlmPort = {
    async complete(request) {
      try {
        const response = await port.complete(request);
        seen.push({ request, response });
        return response;
      } catch (error) {
        seen.push({ request, error });
        throw error;
      }
    },
  };
  return { seen, port: wrapped };
}

function session(port: LlmPort) {
  return createLlmSession({
    port,
    // One attempt, no repair round: each test sees exactly one request.
    config: LlmConfig.parse({
      models: { default: llama.model, reason: llama.model, eval: llama.model },
      timeoutMs: 60_000,
      maxAttempts: 1,
      repairRounds: 0,
    }),
    budget: {},
  });
}

const messages = [
  { role: "system" as const, content: "You answer in JSON — briefly, naïvely." },
  { role: "user" as const, content: "Do what the schema says." },
];

/** A session's verdict on noise: parsed, or refused as not JSON / not the schema; never a server refusal. */
const NOISE_CODES = ["llm_invalid_json", "llm_invalid_output", "llm_output_cut_off"];

describe("a real llama.cpp server", () => {
  const schemas: Array<[string, z.ZodType]> = [
    ["plan", PlanAnswer],
    ["plan_update", PlanUpdateAnswer],
    ["jmp_condition", JmpCondition()],
    ["evaluation", EvaluationAnswer()],
    ["code", CodeAnswer],
    ["knowledge_graph", KnowledgeGraph],
  ];

  it.each(schemas)(
    "accepts the '%s' structured output as the session sends it, and constrains the answer to JSON",
    async (schemaName, schema) => {
      const { seen, port } = recording(new OpenAiLlm({ apiKey: "none", baseURL: llama.url }));
      const outcome = await session(port)
        .json({ purpose: "plan", schemaName, schema, messages, maxOutputTokens: 24 })
        .then(
          (value) => ({ value }),
          (error: { code?: string }) => ({ code: error.code }),
        );

      expect(seen).toHaveLength(1);
      const [{ request, response, error }] = seen as [(typeof seen)[0]];
      expect(error).toBeUndefined();
      expect(request.jsonSchema?.name).toBe(schemaName);
      expect(request.maxOutputTokens).toBe(24);
      expect(response?.inputTokens).toBeGreaterThan(20);
      expect(response?.outputTokens).toBeGreaterThan(0);
      expect(response?.outputTokens).toBeLessThanOrEqual(24);
      // The server's grammar, made from the schema, starts the answer as an object.
      expect(response?.text).toMatch(/^\{/);
      if ("code" in outcome) expect(NOISE_CODES).toContain(outcome.code);
    },
  );

  it("counts a prompt with its own tokenizer (POST /tokenize), for a prompt the estimate does not fit", async () => {
    const port = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
    const counted = await port.countTokens(llama.model, messages);
    // The server's own count of each text, and 8 a message (and 8 for the prompt) for the template.
    let tokens = 8;
    for (const m of messages) {
      const res = await fetch(`${llama.url.replace(/\/v1$/, "")}/tokenize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: m.content, add_special: false }),
      });
      expect(res.status).toBe(200);
      tokens += ((await res.json()) as { tokens: number[] }).tokens.length + 8;
    }
    expect(counted).toBe(tokens);
    expect(counted).toBeGreaterThan(16);
  });

  it("accepts any-JSON (json_object) with an output limit", async () => {
    const { seen, port } = recording(new OpenAiLlm({ apiKey: "none", baseURL: llama.url }));
    await session(port)
      .generate({ purpose: "llm_generate", messages, json: true, maxOutputTokens: 16 })
      .catch((error: { code?: string }) => expect(NOISE_CODES).toContain(error.code));
    const [{ request, response, error }] = seen as [(typeof seen)[0]];
    expect(error).toBeUndefined();
    expect(request.jsonObject).toBe(true);
    expect(response?.outputTokens).toBeLessThanOrEqual(16);
  });

  it("stops at max_completion_tokens and says so (finish_reason length)", async () => {
    const llm = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
    const answer = await llm.complete({
      model: llama.model,
      messages: [{ role: "user", content: "Write a long story." }],
      maxOutputTokens: 5,
      timeoutMs: 60_000,
    });
    // Random weights rarely pick the end token within 5 of 356 tokens; when they do, it says stop.
    expect(answer.outputTokens).toBeLessThanOrEqual(5);
    expect(answer.finishReason).toBe(answer.outputTokens === 5 ? "length" : "stop");
  });

  it("streams the answer as the token relay reads it: deltas that add up to the text, with usage", async () => {
    const llm = new OpenAiLlm({ apiKey: "none", baseURL: llama.url });
    const deltas: string[] = [];
    const answer = await llm.complete({
      model: llama.model,
      messages: [{ role: "user", content: "Count to ten." }],
      maxOutputTokens: 12,
      timeoutMs: 60_000,
      onDelta: (text) => deltas.push(text),
    });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(answer.text);
    // `stream_options.include_usage`: the last chunk carries the usage.
    expect(answer.inputTokens).toBeGreaterThan(5);
    expect(answer.outputTokens).toBeGreaterThan(0);
    expect(answer.outputTokens).toBeLessThanOrEqual(12);
    expect(answer.model).toBe(llama.model);
  });

  it("streams a structured output too (the planner streams its plan)", async () => {
    const { seen, port } = recording(new OpenAiLlm({ apiKey: "none", baseURL: llama.url }));
    const deltas: string[] = [];
    const llm = createLlmSession({
      port,
      config: LlmConfig.parse({
        models: { default: llama.model, reason: llama.model, eval: llama.model },
        timeoutMs: 60_000,
        maxAttempts: 1,
        repairRounds: 0,
      }),
      budget: {},
      tokens: { delta: (_purpose, text) => deltas.push(text), flush: async () => undefined },
    });
    await llm
      .json({
        purpose: "plan",
        role: "reason",
        schemaName: "plan",
        schema: PlanAnswer,
        messages,
        maxOutputTokens: 20,
        stream: true,
      })
      .catch((error: { code?: string }) => expect(NOISE_CODES).toContain(error.code));
    const [{ response, error }] = seen as [(typeof seen)[0]];
    expect(error).toBeUndefined();
    expect(deltas.join("")).toBe(response?.text);
    expect(response?.text).toMatch(/^\{/);
  });

  it("answers embeddings through the project's adapter, one vector per input in order", async () => {
    const embeddings = new OpenAiEmbeddings({ apiKey: "none", baseURL: llama.url });
    const answer = await embeddings.embed({
      model: llama.model,
      input: ["a first chunk of text", "a second — with ünïcode", "third"],
      timeoutMs: 60_000,
    });
    expect(answer.vectors).toHaveLength(3);
    // The tiny model's width.
    for (const vector of answer.vectors) expect(vector).toHaveLength(128);
    expect(answer.vectors[0]).not.toEqual(answer.vectors[1]);
    expect(answer.inputTokens).toBeGreaterThan(10);
  });
});
