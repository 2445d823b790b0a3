/**
 * The llm port's conformance suite: what every adapter must do under core's LLM
 * layer (createLlmSession), against the scripted LLM server speaking the
 * adapter's wire format on loopback. Structured answers, free text and any
 * JSON; usage and cost in the call records; throttling, 5xx, hangs and bodies
 * that are not JSON retried; answers that break the schema repaired; refusals,
 * access denied, unknown models and bad requests as the core's errors.
 *
 * @example
 * describeLlmPort("OpenAiLlm", { model: "gpt-4o-mini", price: {...}, port: (server) => new OpenAiLlm(...) });
 */
import {
  createLlmSession,
  type LlmBudget,
  LlmConfig,
  type LlmPort,
  type LlmRequest,
  RetryableError,
} from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { estimateTokens, Reply, type ScriptedLlm, startScriptedLlm } from "../support/llm-server";

export interface LlmPortFixture {
  /** A model the built-in price table knows. */
  model: string;
  /** Its price, USD per million input and output tokens. */
  price: { input: number; output: number };
  /** The adapter, pointed at the scripted server. */
  port(server: ScriptedLlm): LlmPort;
}

const Verdict = z.object({ result: z.boolean(), explanation: z.string() });
const messages = [{ role: "user" as const, content: "Is the list empty?" }];
const ask = {
  purpose: "jmp_condition",
  schemaName: "jmp_condition",
  schema: Verdict,
  messages,
} as const;
const verdict = { result: true, explanation: "it is" };

export function describeLlmPort(name: string, fixture: LlmPortFixture): void {
  describe(`${name}: llm port conformance`, () => {
    let server: ScriptedLlm;
    let waits: number[];

    beforeAll(async () => {
      server = await startScriptedLlm();
    });
    afterAll(() => server.close());
    beforeEach(() => {
      server.reset();
      waits = [];
    });

    const config = (options: { timeoutMs?: number; repairRounds?: number; maxAttempts?: number }) =>
      LlmConfig.parse({
        models: { default: fixture.model, reason: fixture.model, eval: fixture.model },
        timeoutMs: options.timeoutMs ?? 5_000,
        repairRounds: options.repairRounds ?? 2,
        ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
      });

    function session(
      options: {
        budget?: LlmBudget;
        timeoutMs?: number;
        repairRounds?: number;
        maxAttempts?: number;
      } = {},
    ) {
      return createLlmSession({
        port: fixture.port(server),
        config: config(options),
        budget: options.budget ?? {},
        sleep: async (ms) => {
          waits.push(ms);
        },
        random: () => 0,
      });
    }
    const request: () => LlmRequest = () => ({
      model: fixture.model,
      messages,
      timeoutMs: 5_000,
    });

    it("asks for the schema by name and records tokens and cost", async () => {
      server.queue("jmp_condition", verdict);
      const llm = session();
      expect(await llm.json(ask)).toEqual(verdict);
      expect(server.requests.map((r) => [r.schemaName, r.model])).toEqual([
        ["jmp_condition", fixture.model],
      ]);
      const input = estimateTokens(messages[0]!.content);
      const output = estimateTokens(JSON.stringify(verdict));
      expect(llm.calls).toEqual([
        {
          purpose: "jmp_condition",
          model: fixture.model,
          input_tokens: input,
          output_tokens: output,
          cost_usd: (input * fixture.price.input + output * fixture.price.output) / 1_000_000,
          latency_ms: expect.any(Number),
          attempts: 1,
        },
      ]);
    });

    it("sends the system message and answers free text with its reasoning", async () => {
      server.on("text", new Reply("Paris", { reasoning_content: "capital of France" }));
      const conversation = [{ role: "system" as const, content: "Be brief." }, ...messages];
      expect(await session().generate({ purpose: "llm_generate", messages: conversation })).toEqual(
        { text: "Paris", reasoning: "capital of France" },
      );
      expect(server.requests[0]?.messages).toEqual(conversation);
    });

    it("says why the model stopped, in the server's words, for the call's trace", async () => {
      server.queue("text", new Reply("Paris"), new Reply("Par", { finish_reason: "length" }));
      const port = fixture.port(server);
      const done = await port.complete(request());
      const cut = await port.complete(request());
      expect(done.finishReason).toEqual(expect.any(String));
      expect(cut.finishReason).toEqual(expect.any(String));
      expect(cut.finishReason).not.toBe(done.finishReason);
    });

    it("asks for any JSON object when generate wants JSON", async () => {
      server.on("json_object", { k: 1 });
      const answer = await session().generate({ purpose: "llm_generate", messages, json: true });
      expect(answer).toMatchObject({ value: { k: 1 } });
      expect(server.requests[0]?.schemaName).toBe("json_object");
    });

    it.each([
      ["throttled (429)", { fault: "429" }],
      ["a 500", { fault: "500" }],
      ["a body that is not JSON", { fault: "malformed" }],
    ])("retries %s and then succeeds", async (_what, fault) => {
      server.queue("jmp_condition", fault, verdict);
      const llm = session();
      expect(await llm.json(ask)).toEqual(verdict);
      expect(server.requests).toHaveLength(2);
      expect(llm.calls.map((c) => c.attempts)).toEqual([2]);
      expect(waits).toHaveLength(1);
    });

    it("retries a hang past the timeout and then succeeds", async () => {
      server.queue("jmp_condition", { fault: "hang", ms: 3_000 }, verdict);
      const llm = session({ timeoutMs: 300 });
      expect(await llm.json(ask)).toEqual(verdict);
      expect(llm.calls[0]?.attempts).toBe(2);
    });

    it("rethrows llm_timeout when every attempt hangs", async () => {
      server.on("jmp_condition", { fault: "hang", ms: 3_000 });
      const llm = session({ timeoutMs: 100, maxAttempts: 2 });
      await expect(llm.json(ask)).rejects.toMatchObject({
        kind: "retryable",
        code: "llm_timeout",
        message: expect.stringMatching(/within 100 ms \(LLM_TIMEOUT_MS\)/),
      });
      expect(server.requests).toHaveLength(2);
    });

    it("calls a server that answers, slowly, past the limit a timeout, never unreachable", async () => {
      server.on("jmp_condition", { fault: "slow", ms: 1_000, answer: verdict });
      const llm = session({ timeoutMs: 100, maxAttempts: 1 });
      const error = (await llm.json(ask).catch((e: unknown) => e)) as Error;
      expect(error).toMatchObject({ kind: "retryable", code: "llm_timeout" });
      expect(error.message).not.toMatch(/could not be reached/);
    });

    it("records a call that failed in every attempt, with its attempts and the error", async () => {
      server.on("jmp_condition", { fault: "500", message: "scripted outage" });
      const llm = session({ maxAttempts: 2 });
      await expect(llm.json(ask)).rejects.toMatchObject({ code: "llm_server_error" });
      expect(server.requests).toHaveLength(2);
      expect(llm.calls).toEqual([
        expect.objectContaining({
          purpose: "jmp_condition",
          attempts: 2,
          input_tokens: 0,
          output_tokens: 0,
          error: { code: "llm_server_error", message: expect.stringContaining("scripted outage") },
        }),
      ]);
    });

    it.each([
      [400, "a request the server refuses"],
      [501, "what the server does not implement"],
    ])("does not retry %i (%s), and quotes the server", async (status) => {
      server.on("jmp_condition", {
        fault: "status",
        status,
        message: "scripted: start it with --x",
      });
      const llm = session({ maxAttempts: 4 });
      await expect(llm.json(ask)).rejects.toMatchObject({
        code: "llm_bad_request",
        message: expect.stringContaining("scripted: start it with --x"),
      });
      expect(server.requests).toHaveLength(1);
      expect(llm.calls.map((c) => [c.attempts, c.error?.code])).toEqual([[1, "llm_bad_request"]]);
    });

    it("repairs an answer that is not JSON, then one that breaks the schema", async () => {
      server.queue("jmp_condition", { fault: "bad_json" }, { result: "maybe" }, verdict);
      const llm = session();
      expect(await llm.json(ask)).toEqual(verdict);
      expect(llm.calls.map((c) => c.attempts)).toEqual([1, 1, 1]);
      const repairs = server.requests.slice(1).map((r) => r.messages.at(-1)?.content);
      expect(repairs[0]).toMatch(/^Your answer is not valid 'jmp_condition' JSON:\n- the answer/);
      expect(repairs[1]).toMatch(/^Your answer is not valid 'jmp_condition' JSON:\n- result:/);
      expect(server.requests[2]?.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
      ]);
    });

    it("fails with llm_invalid_output once the rounds are spent", async () => {
      server.on("jmp_condition", { result: "maybe" });
      const llm = session({ repairRounds: 1 });
      await expect(llm.json(ask)).rejects.toMatchObject({
        kind: "step",
        code: "llm_invalid_output",
        details: {
          errors: ["result: Invalid input: expected boolean, received string", expect.any(String)],
        },
      });
      expect(llm.calls).toHaveLength(2);
    });

    it("refuses before calling when the budget is spent", async () => {
      server.on("jmp_condition", verdict);
      const llm = session({ budget: { tokensLeft: 0, maxTokens: 1_000 } });
      await expect(llm.json(ask)).rejects.toMatchObject({ code: "budget_exceeded" });
      expect(server.requests).toEqual([]);
    });

    it("hands throttling back as a RetryableError once the attempts run out", async () => {
      server.on("jmp_condition", { fault: "429" });
      const llm = session({ maxAttempts: 2 });
      const error = await llm.json(ask).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RetryableError);
      expect(error).toMatchObject({ code: "llm_rate_limited" });
      expect(llm.calls.map((c) => [c.attempts, c.error?.code])).toEqual([[2, "llm_rate_limited"]]);
    });

    it.each([
      [403, "unauthorized", "llm_forbidden"],
      [404, "not_found", "llm_model_not_found"],
      [400, "step", "llm_bad_request"],
      [501, "step", "llm_bad_request"],
      [500, "retryable", "llm_server_error"],
      [503, "retryable", "llm_server_error"],
    ])("translates %i to a %s error", async (status, kind, code) => {
      server.on("text", { fault: "status", status });
      await expect(fixture.port(server).complete(request())).rejects.toMatchObject({
        kind,
        code,
        message: expect.stringContaining(String(status)),
      });
    });

    it("turns a refusal into a step error", async () => {
      server.on("text", new Reply(null, { refusal: "I can't help with that." }));
      await expect(fixture.port(server).complete(request())).rejects.toMatchObject({
        kind: "step",
        code: "llm_refused",
      });
    });

    it("streams the answer in pieces whose whole is the answer, with the same usage", async () => {
      const text = "Kyoto has some 1,600 temples, and Nara's are older still.";
      server.on("text", new Reply(text, { reasoning_content: "counting" }));
      const pieces: string[] = [];
      const answer = await fixture.port(server).complete({
        ...request(),
        onDelta: (piece) => pieces.push(piece),
      });
      expect(pieces.length).toBeGreaterThan(2);
      expect(pieces.join("")).toBe(text);
      expect(answer).toMatchObject({
        text,
        reasoning: "counting",
        inputTokens: estimateTokens(messages[0]!.content),
        outputTokens: estimateTokens(text),
      });
    });

    it("streams a structured answer through the session's sink and parses it whole", async () => {
      server.queue("jmp_condition", verdict);
      const seen: Array<[string, string]> = [];
      let flushes = 0;
      const llm = createLlmSession({
        port: fixture.port(server),
        config: config({}),
        budget: {},
        tokens: {
          delta: (purpose, piece) => seen.push([purpose, piece]),
          flush: async () => {
            flushes++;
          },
        },
      });
      expect(await llm.json({ ...ask, stream: true })).toEqual(verdict);
      expect(seen.map(([, piece]) => piece).join("")).toBe(JSON.stringify(verdict));
      expect(new Set(seen.map(([purpose]) => purpose))).toEqual(new Set(["jmp_condition"]));
      expect(flushes).toBe(1);
      expect(llm.calls[0]?.output_tokens).toBe(estimateTokens(JSON.stringify(verdict)));
    });

    it("retries a throttled streamed call and streams only the answer", async () => {
      server.queue("text", { fault: "429" }, "all good");
      const seen: string[] = [];
      const llm = createLlmSession({
        port: fixture.port(server),
        config: config({}),
        budget: {},
        sleep: async () => undefined,
        tokens: { delta: (_p, piece) => seen.push(piece), flush: async () => undefined },
      });
      expect(await llm.generate({ purpose: "llm_generate", messages, stream: true })).toMatchObject(
        { text: "all good" },
      );
      expect(seen.join("")).toBe("all good");
    });

    it("calls a server that is not there unreachable", async () => {
      const closed = await startScriptedLlm();
      await closed.close();
      await expect(fixture.port(closed).complete(request())).rejects.toMatchObject({
        kind: "retryable",
        code: "llm_unreachable",
        message: expect.stringContaining("could not be reached"),
      });
    });

    it("calls a connection closed without an answer unreachable", async () => {
      server.on("text", { fault: "close" });
      await expect(fixture.port(server).complete(request())).rejects.toMatchObject({
        kind: "retryable",
        code: "llm_unreachable",
      });
    });
  });
}
