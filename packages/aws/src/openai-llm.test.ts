/**
 * What is OpenAI's own in `OpenAiLlm`: the request on the wire (response_format,
 * the key), Retry-After, and the messages of its errors. What every llm port
 * adapter must do (retries, repairs, budgets, costs, refusals, a server that is
 * not there) is the conformance suite's: test/conformance/llm-port.test.ts.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createLlmSession,
  type LlmBudget,
  LlmConfig,
  type LlmRequest,
  RetryableError,
} from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  estimateTokens,
  Reply,
  type ScriptedLlm,
  startScriptedLlm,
} from "../../../test/support/llm-server";
import { OpenAiEmbeddings } from "./openai-embeddings";
import { OpenAiLlm, retryAfterSeconds } from "./openai-llm";

const Verdict = z.object({ result: z.boolean(), explanation: z.string() });
const messages = [{ role: "user" as const, content: "Is the list empty?" }];
const ask = {
  purpose: "jmp_condition",
  schemaName: "jmp_condition",
  schema: Verdict,
  messages,
} as const;
const verdict = { result: true, explanation: "it is" };

let server: ScriptedLlm;
let waits: number[];

beforeAll(async () => {
  server = await startScriptedLlm({ apiKey: "sk-test" });
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  waits = [];
});

function session(options: { budget?: LlmBudget; timeoutMs?: number; repairRounds?: number } = {}) {
  return createLlmSession({
    port: new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url }),
    config: LlmConfig.parse({
      models: { default: "gpt-4o-mini", reason: "gpt-4o-mini", eval: "gpt-4o-mini" },
      timeoutMs: options.timeoutMs ?? 5_000,
      repairRounds: options.repairRounds ?? 2,
    }),
    budget: options.budget ?? {},
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0,
  });
}

describe("OpenAiLlm with createLlmSession", () => {
  it("sends the schema name in response_format and records usage and cost", async () => {
    server.queue("jmp_condition", verdict);
    const llm = session();
    expect(await llm.json(ask)).toEqual(verdict);

    const [request] = server.requests;
    expect(request?.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "jmp_condition", strict: true },
    });
    const input = estimateTokens(messages[0]!.content);
    const output = estimateTokens(JSON.stringify(verdict));
    expect(llm.calls).toEqual([
      {
        purpose: "jmp_condition",
        model: "gpt-4o-mini",
        input_tokens: input,
        output_tokens: output,
        cost_usd: (input * 0.15 + output * 0.6) / 1_000_000,
        latency_ms: expect.any(Number),
        attempts: 1,
      },
    ]);
  });

  it("sends no response_format for free text and returns reasoning_content", async () => {
    server.on("text", new Reply("Paris", { reasoning_content: "capital of France" }));
    const llm = session();
    expect(await llm.generate({ purpose: "llm_generate", messages })).toEqual({
      text: "Paris",
      reasoning: "capital of France",
    });
    expect(server.requests[0]?.body).not.toHaveProperty("response_format");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test");
  });

  it("asks for json_object when generate wants any JSON", async () => {
    server.on("json_object", { k: 1 });
    expect(
      await session().generate({ purpose: "llm_generate", messages, json: true }),
    ).toMatchObject({
      value: { k: 1 },
    });
    expect(server.requests[0]?.body.response_format).toEqual({ type: "json_object" });
  });

  it("sends strict false for a schema outside strict mode's subset", async () => {
    server.queue("evaluation", { score: 1 });
    const Loose = z.object({ score: z.number(), note: z.string().optional() });
    await session().json({
      ...ask,
      purpose: "evaluation",
      schemaName: "evaluation",
      schema: Loose,
    });
    expect(server.requests[0]?.body.response_format).toMatchObject({
      json_schema: { name: "evaluation", strict: false },
    });
  });

  it("waits out a 429's Retry-After and then succeeds", async () => {
    server.queue("jmp_condition", { fault: "429", retryAfter: 3 }, verdict);
    const llm = session();
    expect(await llm.json(ask)).toEqual(verdict);
    expect(waits).toEqual([3_000]);
    expect(server.requests).toHaveLength(2);
    expect(llm.calls).toHaveLength(1);
    expect(llm.calls[0]?.attempts).toBe(2);
  });

  it("hands a Retry-After over the cap back as a RetryableError", async () => {
    server.queue("jmp_condition", { fault: "429", retryAfter: 120 });
    const llm = session();
    const error = await llm.json(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableError);
    expect(error).toMatchObject({ code: "llm_rate_limited", retryAfterSeconds: 120 });
    // The attempt was made: it is on the record, as every attempt is.
    expect(llm.calls.map((c) => [c.attempts, c.error?.code])).toEqual([[1, "llm_rate_limited"]]);
  });
});

describe("OpenAiLlm errors", () => {
  const request: LlmRequest = { model: "gpt-x", messages, timeoutMs: 5_000 };

  it.each([
    [401, "unauthorized", "llm_unauthorized", /OPENAI_API_KEY is wrong/],
    [403, "unauthorized", "llm_forbidden", /may not use model 'gpt-x'/],
    [404, "not_found", "llm_model_not_found", /model 'gpt-x'/],
    [400, "step", "llm_bad_request", /answered 400/],
    [422, "step", "llm_bad_request", /answered 422/],
    [409, "step", "llm_bad_request", /answered 409/],
    [408, "retryable", "llm_timeout", /answered 408/],
    [501, "step", "llm_bad_request", /answered 501.*not retried/],
    [503, "retryable", "llm_server_error", /answered 503/],
  ])("translates %i to a %s error", async (status, kind, code, message) => {
    server.on("text", { fault: "status", status });
    const port = new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url });
    await expect(port.complete(request)).rejects.toMatchObject({
      kind,
      code,
      message: expect.stringMatching(message),
    });
  });

  it("calls a streamed answer still being written at the timeout a timeout, not a cut answer", async () => {
    server.streaming = { chunkChars: 4, chunkDelayMs: 40 };
    server.on("text", "This answer takes far longer than the timeout allows.");
    const port = new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url });
    const pieces: string[] = [];
    await expect(
      port.complete({ ...request, timeoutMs: 150, onDelta: (p) => pieces.push(p) }),
    ).rejects.toMatchObject({ kind: "retryable", code: "llm_timeout" });
    expect(pieces.length).toBeGreaterThan(0);
  });

  it("counts the tokens of a streamed answer cut off by the timeout in the failed call's record", async () => {
    server.streaming = { chunkChars: 4, chunkDelayMs: 40 };
    server.on("text", "This answer takes far longer than the timeout allows to be written.");
    const llm = createLlmSession({
      port: new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url }),
      config: LlmConfig.parse({
        models: { default: "gpt-4o-mini", reason: "gpt-4o-mini", eval: "gpt-4o-mini" },
        timeoutMs: 150,
        maxAttempts: 1,
      }),
      budget: {},
      tokens: { delta: () => undefined, flush: async () => undefined },
    });
    await expect(
      llm.generate({ purpose: "llm_generate", messages, stream: true }),
    ).rejects.toMatchObject({ code: "llm_timeout" });
    expect(llm.calls).toHaveLength(1);
    expect(llm.calls[0]?.error?.code).toBe("llm_timeout");
    expect(llm.calls[0]?.output_tokens).toBeGreaterThan(0);
    expect(llm.calls[0]?.cost_usd).toBeGreaterThan(0);
  });

  it("says the key is wrong when the server refuses it", async () => {
    const port = new OpenAiLlm({ apiKey: "sk-wrong", baseURL: server.url });
    await expect(port.complete(request)).rejects.toThrow(/OPENAI_API_KEY is wrong/);
  });

  it("fails a spent quota instead of retrying it", async () => {
    server.on("text", { fault: "status", status: 429, code: "insufficient_quota" });
    const port = new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url });
    await expect(port.complete(request)).rejects.toMatchObject({ code: "llm_quota_exceeded" });
  });

  it("calls a body that is not JSON a bad response, to retry", async () => {
    server.on("text", { fault: "malformed" });
    const port = new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url });
    await expect(port.complete(request)).rejects.toMatchObject({
      kind: "retryable",
      code: "llm_bad_response",
    });
  });
});

describe("retryAfterSeconds", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");

  it.each([
    [{ "retry-after": "7" }, 7],
    [{ "retry-after": "1.5" }, 1.5],
    [{ "retry-after-ms": "250", "retry-after": "9" }, 0.25],
    [{ "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" }, 30],
    [{ "retry-after": "Tue, 31 Dec 2024 23:00:00 GMT" }, 0],
    [{ "retry-after": "soon" }, undefined],
    [{}, undefined],
  ])("reads %j as %s", (headers, seconds) => {
    expect(retryAfterSeconds(new Headers(headers), now)).toBe(seconds);
  });
});

describe("OpenAiLlm and OpenAiEmbeddings redirects", () => {
  it("follow none: a redirecting server cannot send the stack to another listener", async () => {
    let reached = 0;
    const target = createServer((_req, res) => {
      reached++;
      res.end("{}");
    });
    await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
    const to = `http://127.0.0.1:${(target.address() as AddressInfo).port}/v1`;
    const redirector = createServer((req, res) => {
      res.writeHead(307, { location: `${to}${req.url?.replace(/^\/v1/, "")}` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    const baseURL = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1`;
    try {
      const llm = new OpenAiLlm({ apiKey: "sk-test", baseURL });
      await expect(
        llm.complete({
          model: "m",
          purpose: "generate",
          messages,
          timeoutMs: 5000,
        } as unknown as LlmRequest),
      ).rejects.toThrow();
      const embeddings = new OpenAiEmbeddings({ apiKey: "sk-test", baseURL });
      await expect(
        embeddings.embed({ model: "e", input: ["x"], timeoutMs: 5000 } as never),
      ).rejects.toThrow();
      expect(reached).toBe(0);
    } finally {
      target.close();
      redirector.close();
    }
  });
});
