import { describe, expect, it } from "vitest";
import * as z from "zod";
import { RetryableError } from "../errors";
import type { LlmPort, LlmResponse } from "../ports/llm";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { LlmConfig } from "./config";
import { createLlmSession } from "./session";
import { type LlmTrace, REDACTED, redactSecrets, traceExpired } from "./trace";

const config = LlmConfig.parse({
  models: { default: "small", reason: "big", eval: "big" },
  timeoutMs: 5_000,
});

/** Answers from a list: text, a response, or an error to throw. */
function port(...answers: (string | Error | Partial<LlmResponse>)[]): LlmPort {
  return {
    async complete(request) {
      const answer = answers.shift();
      if (answer === undefined) throw new Error("no answer left");
      if (answer instanceof Error) throw answer;
      const base = { model: request.model, inputTokens: 10, outputTokens: 5, finishReason: "stop" };
      return typeof answer === "string"
        ? { ...base, text: answer }
        : { ...base, text: "", ...answer };
    },
  };
}

function traced(llm: LlmPort, secrets: string[] = []) {
  const blobs = new MemoryBlobs();
  const prefix = "llm/t1/task1";
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const session = createLlmSession({
    port: llm,
    config,
    budget: {},
    sleep: async () => {},
    random: () => 0,
    now: () => (clock += 5),
    trace: { blobs, prefix, secrets },
  });
  const read = async (sha: string | undefined): Promise<LlmTrace> => {
    const bytes = await blobs.get(prefix, sha!);
    return JSON.parse(new TextDecoder().decode(bytes!));
  };
  return { session, blobs, read };
}

describe("LLM traces", () => {
  it("stores each call's request and answer as one blob named in its record", async () => {
    const { session, blobs, read } = traced(port("Kyoto has temples."));
    await session.generate({
      purpose: "llm_generate",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Tell me about Kyoto." },
      ],
      temperature: 0.2,
      maxOutputTokens: 100,
    });
    expect(blobs.keys()).toHaveLength(1);
    const call = session.calls[0]!;
    expect(call.trace).toMatch(/^[0-9a-f]{64}$/);
    const trace = await read(call.trace);
    expect(trace).toMatchObject({
      purpose: "llm_generate",
      model: "small",
      request: {
        model: "small",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Tell me about Kyoto." },
        ],
        temperature: 0.2,
        max_tokens: 100,
      },
      response: { text: "Kyoto has temples.", finish_reason: "stop" },
      repair_round: 0,
      attempts: [{ attempt: 1 }],
    });
    expect(trace.request.response_format).toBeUndefined();
  });

  it("keeps each repair round's answer, why it was sent back, and the failed attempts", async () => {
    const Verdict = z.object({ result: z.boolean() });
    const { session, read } = traced(
      port(
        new RetryableError("llm_server_error", "the LLM server answered 503"),
        '{"result": "maybe"}',
        '{"result": true}',
      ),
    );
    const value = await session.json({
      purpose: "jmp_condition",
      schemaName: "jmp_condition",
      schema: Verdict,
      messages: [{ role: "user", content: "Done?" }],
    });
    expect(value).toEqual({ result: true });
    const [first, second] = await Promise.all(session.calls.map((c) => read(c.trace)));
    expect(first!.attempts.map((a) => a.error ?? "ok")).toEqual([
      "the LLM server answered 503",
      "ok",
    ]);
    expect(first!.rejected).toEqual(["result: Invalid input: expected boolean, received string"]);
    expect(first!.response.json).toBeUndefined();
    expect(first!.request.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "jmp_condition" },
    });
    expect(second!.repair_round).toBe(1);
    expect(second!.response.json).toEqual({ result: true });
    expect(second!.request.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(second!.request.messages[2]!.content).toContain("not valid 'jmp_condition' JSON");
  });

  it("redacts bearer tokens, key shapes and the deployment's secrets before storing", async () => {
    const apiKey = "deployment-openai-key-0123456789";
    const userKey = `svm_acme_${"a".repeat(40)}`;
    const { session, blobs, read } = traced(
      port(`Use ${apiKey} with sk-proj-abcdefghijklmnop1234`),
      [apiKey],
    );
    await session.generate({
      purpose: "llm_generate",
      messages: [
        {
          role: "user",
          content: `curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig" -H 'X-Api-Key: k3y-value' ${userKey} {"password": "hunter22"} whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`,
        },
      ],
    });
    const trace = await read(session.calls[0]!.trace);
    const stored = JSON.stringify(trace);
    for (const secret of [
      apiKey,
      "eyJhbGciOiJIUzI1NiJ9",
      "k3y-value",
      userKey,
      "hunter22",
      "sk-proj",
      "whsec_MfKQ",
    ]) {
      expect(stored).not.toContain(secret);
    }
    expect(trace.request.messages[0]!.content).toContain(`Authorization: Bearer ${REDACTED}`);
    expect(trace.response.text).toBe(`Use ${REDACTED} with ${REDACTED}`);
    // The redacted trace is what was written: no other copy exists.
    expect(blobs.keys()).toHaveLength(1);
  });

  it("leaves ordinary text alone", () => {
    const text =
      "Basic information about Bearer instruments: Kyoto has 1,600 temples; the secret garden opens at 9.";
    expect(redactSecrets({ text, n: 3, list: ["a key idea"] }, [])).toEqual({
      text,
      n: 3,
      list: ["a key idea"],
    });
  });

  it("keeps no trace without a sink", async () => {
    const session = createLlmSession({ port: port("hi"), config, budget: {} });
    await session.generate({ purpose: "llm_generate", messages: [{ role: "user", content: "x" }] });
    expect(session.calls[0]!.trace).toBeUndefined();
  });

  it("counts a trace as expired once its retention has passed", () => {
    const at = "2026-01-01T00:00:00.000Z";
    expect(traceExpired(at, Date.parse("2026-01-30T23:59:59Z"), 30)).toBe(false);
    expect(traceExpired(at, Date.parse("2026-01-31T00:00:00Z"), 30)).toBe(true);
  });
});
