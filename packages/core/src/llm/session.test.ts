import { describe, expect, it } from "vitest";
import * as z from "zod";
import { RetryableError, StepError } from "../errors";
import type { LlmPort, LlmRequest, LlmResponse } from "../ports/llm";
import { LlmConfig } from "./config";
import { createLlmSession } from "./session";
import type { LlmSessionDeps } from "./session-deps";

const Verdict = z.object({ result: z.boolean(), explanation: z.string() });

/** A port that answers from a list (text, or an error to throw) and records requests. */
function scriptedPort(...answers: (string | Error | Partial<LlmResponse>)[]) {
  const requests: LlmRequest[] = [];
  const port: LlmPort = {
    async complete(request) {
      requests.push(structuredClone(request));
      const answer = answers.shift();
      if (answer === undefined) throw new Error("the test port has no answer left");
      if (answer instanceof Error) throw answer;
      const base = { model: request.model, inputTokens: 100, outputTokens: 50 };
      return typeof answer === "string"
        ? { ...base, text: answer }
        : { ...base, text: "", ...answer };
    },
  };
  return { port, requests };
}

function session(port: LlmPort, overrides: Partial<LlmSessionDeps> = {}) {
  const waits: number[] = [];
  let clock = 1_000;
  const llm = createLlmSession({
    port,
    config: LlmConfig.parse({
      models: { default: "gpt-4o-mini", reason: "o4-mini", eval: "gpt-4.1" },
      timeoutMs: 5_000,
    }),
    budget: {},
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
    random: () => 0,
    now: () => (clock += 10),
    ...overrides,
  });
  return { llm, waits };
}

const ask = { purpose: "jmp_condition", schemaName: "jmp_condition", schema: Verdict } as const;
const messages = [{ role: "user" as const, content: "Is it done?" }];

describe("createLlmSession", () => {
  it("picks the model of the role and passes the timeout", async () => {
    const { port, requests } = scriptedPort("a", "b", "c", "d");
    const { llm } = session(port);
    await llm.generate({ purpose: "llm_generate", messages });
    await llm.generate({ purpose: "plan", role: "reason", messages });
    await llm.generate({ purpose: "evaluation", role: "eval", messages });
    expect(requests.map((r) => [r.model, r.timeoutMs])).toEqual([
      ["gpt-4o-mini", 5_000],
      ["o4-mini", 5_000],
      ["gpt-4.1", 5_000],
    ]);
  });

  it("sends free text with no JSON format", async () => {
    const { port, requests } = scriptedPort("hello");
    const { llm } = session(port);
    expect(await llm.generate({ purpose: "llm_generate", messages })).toEqual({ text: "hello" });
    expect(requests[0]).not.toHaveProperty("jsonSchema");
    expect(requests[0]?.jsonObject).toBeUndefined();
  });

  it("asks for a named json_schema and returns the parsed value", async () => {
    const { port, requests } = scriptedPort('```json\n{"result": true, "explanation": "yes"}\n```');
    const { llm } = session(port);
    expect(await llm.json({ ...ask, messages })).toEqual({ result: true, explanation: "yes" });
    expect(requests[0]?.jsonSchema).toEqual({
      name: "jmp_condition",
      schema: {
        type: "object",
        properties: { result: { type: "boolean" }, explanation: { type: "string" } },
        required: ["result", "explanation"],
        additionalProperties: false,
      },
    });
  });

  it("records model, tokens, cost, latency and attempts of every call", async () => {
    const { port } = scriptedPort(new RetryableError("llm_server_error", "503"), {
      text: "hi",
      inputTokens: 1_000_000,
      outputTokens: 1_000_000,
      model: "gpt-4o-mini-2024-07-18",
    });
    const { llm } = session(port);
    await llm.generate({ purpose: "llm_generate", messages });
    expect(llm.calls).toEqual([
      {
        purpose: "llm_generate",
        model: "gpt-4o-mini-2024-07-18",
        input_tokens: 1_000_000,
        output_tokens: 1_000_000,
        cost_usd: 0.75,
        latency_ms: 10,
        attempts: 2,
      },
    ]);
  });

  it("sends an invalid answer back with its errors and accepts the repair", async () => {
    const { port, requests } = scriptedPort(
      '{"result": "yes"}',
      '{"result": true, "explanation": "fixed"}',
    );
    const { llm } = session(port);
    expect(await llm.json({ ...ask, messages })).toEqual({ result: true, explanation: "fixed" });
    const repair = requests[1]!.messages;
    expect(repair.slice(0, 2)).toEqual([
      ...messages,
      { role: "assistant", content: '{"result": "yes"}' },
    ]);
    expect(repair[2]?.role).toBe("user");
    expect(repair[2]?.content).toContain("- result: Invalid input: expected boolean");
    expect(repair[2]?.content).toContain("- explanation:");
    expect(llm.calls).toHaveLength(2);
  });

  it("gives up after the repair rounds with llm_invalid_output and the last errors", async () => {
    const { port, requests } = scriptedPort("no", "still no", "never");
    const { llm } = session(port);
    const error = await llm.json({ ...ask, messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({
      code: "llm_invalid_output",
      details: { answer: "never", purpose: "jmp_condition" },
    });
    expect((error as Error).message).toMatch(
      /no valid 'jmp_condition' JSON in 3 answer\(s\): the answer is not JSON/,
    );
    expect(requests).toHaveLength(3);
    expect(llm.calls).toHaveLength(3);
  });

  it("parses any JSON object when generate asks for json", async () => {
    const { port, requests } = scriptedPort("nope", '{"k": 1}');
    const { llm } = session(port);
    const result = await llm.generate({ purpose: "llm_generate", messages, json: true });
    expect(result).toEqual({ text: '{"k": 1}', value: { k: 1 } });
    expect(requests.map((r) => r.jsonObject)).toEqual([true, true]);
  });

  it("returns the reasoning the server sent apart", async () => {
    const { port } = scriptedPort({ text: "42", reasoning: "because" });
    const { llm } = session(port);
    expect(await llm.generate({ purpose: "llm_generate", messages })).toEqual({
      text: "42",
      reasoning: "because",
    });
  });

  it("refuses a call once the token budget is spent, counting this session's calls", async () => {
    const { port, requests } = scriptedPort("one", "two");
    const { llm } = session(port, { budget: { tokensLeft: 150, maxTokens: 2_000 } });
    await llm.generate({ purpose: "llm_generate", messages });
    await expect(llm.generate({ purpose: "llm_generate", messages })).rejects.toMatchObject({
      name: "BudgetExceededError",
      kind: "forbidden",
      code: "budget_exceeded",
      message:
        "max_tokens budget spent: 2,000 of 2,000 tokens used; raise budget.max_tokens to go on",
    });
    expect(requests).toHaveLength(1);
  });

  it.each([
    [{ tokensLeft: -13, maxTokens: 2_000 }, /2,013 of 2,000 tokens used/],
    [{ tokensLeft: -13 }, /max_tokens budget spent: 13 tokens over/],
    [{ costLeftUsd: 0, maxCostUsd: 1 }, /max_cost_usd budget spent: \$1\.0000 of \$1\.0000 used/],
    [{ costLeftUsd: -0.5 }, /max_cost_usd budget spent: \$0\.5000 over/],
  ])("refuses before calling with budget %j", async (budget, message) => {
    const { port, requests } = scriptedPort("never sent");
    const { llm } = session(port, { budget });
    await expect(llm.json({ ...ask, messages })).rejects.toThrow(message);
    expect(requests).toHaveLength(0);
    expect(llm.calls).toHaveLength(0);
  });

  it("checks the budget before each repair round", async () => {
    // gpt-4o-mini: 100 in + 50 out = $0.000045 per call; the budget covers one.
    const { port, requests } = scriptedPort("bad", '{"result": true, "explanation": ""}');
    const { llm } = session(port, { budget: { costLeftUsd: 0.00004 } });
    await expect(llm.json({ ...ask, messages })).rejects.toMatchObject({ code: "budget_exceeded" });
    expect(requests).toHaveLength(1);
  });
});
