/**
 * Every LLM call bounded, through the real `openai` client against the scripted
 * server: each purpose's output limit on the wire, prompts measured against the
 * context the server lists (or `LLM_CONTEXT_TOKENS`), the server's own overflow
 * 400, answers cut off at the limit, and repairs that repeat only an excerpt of
 * the refused answer.
 */
import {
  type BranchRecord,
  builtinTools,
  createLlmSession,
  LlmConfig,
  lazyPlanner,
  loadLlmConfig,
} from "@stackvm/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { Reply, type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { lazyOpenAiLlm } from "./lazy-worker-adapters";
import { OpenAiLlm } from "./openai-llm";

let server: ScriptedLlm;

beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const models = { default: "small", reason: "small", eval: "small" };

function session(config: Partial<LlmConfig> = {}) {
  return createLlmSession({
    // A new adapter per test: each asks the server for its context afresh.
    port: new OpenAiLlm({ apiKey: "none", baseURL: server.url }),
    config: LlmConfig.parse({ models, timeoutMs: 5_000, maxAttempts: 1, ...config }),
    budget: {},
    sleep: async () => {},
  });
}

const tools = builtinTools();
const allowed = new Set(tools.keys());
const branch = {
  tenant_id: "t1",
  config: { goal: "Say hello", inputs: {}, response_format: {}, namespace: { name: "default" } },
} as unknown as BranchRecord;
const planner = lazyPlanner({ clock: { now: () => Date.parse("2026-11-27") }, repairRounds: 2 });
const plan = async (llm: ReturnType<typeof session>) =>
  planner.plan({ branch, llm, tools, allowed });
const goodPlan = {
  reasoning: "one step",
  plan: [
    {
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: "Say hello" },
        output_vars: ["final_answer"],
      },
    },
  ],
};
const llamaProps = (nCtx: number) => ({
  "/props": { default_generation_settings: { n_ctx: nCtx, params: {} }, total_slots: 1 },
});

describe("output limits", () => {
  it("sends each purpose's limit as max_tokens, the defaults fitting a 4,096-token server", async () => {
    server.queue("plan", goodPlan);
    server.on("text", "hello");
    server.queue("jmp_condition", { result: true, explanation: "yes" });
    const llm = session();
    await plan(llm);
    await llm.generate({ purpose: "llm_generate", messages: [{ role: "user", content: "hi" }] });
    await llm.json({
      purpose: "jmp_condition",
      schemaName: "jmp_condition",
      schema: z.object({ result: z.boolean(), explanation: z.string() }),
      messages: [{ role: "user", content: "Is it?" }],
    });
    expect(server.requests.map((r) => [r.schemaName, r.body.max_tokens])).toEqual([
      ["plan", 2048],
      ["text", 2048],
      ["jmp_condition", 512],
    ]);
    // OpenAI's newer name is left to OpenAI: llama.cpp read only max_tokens until 2026.
    expect(server.requests[0]?.body.max_completion_tokens).toBeUndefined();
  });

  it("takes LLM_MAX_OUTPUT_TOKENS over the defaults", async () => {
    server.queue("plan", goodPlan);
    const config = loadLlmConfig({ LLM_MODEL: "small", LLM_MAX_OUTPUT_TOKENS: "plan=300" });
    await plan(session(config));
    expect(server.requests[0]?.body.max_tokens).toBe(300);
  });
});

describe("the prompt measured against the server's context", () => {
  it("fails at once with llm_context_exceeded when the prompt cannot fit llama.cpp's n_ctx, sending nothing", async () => {
    server.listings = llamaProps(1024);
    const error = await plan(session()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_context_exceeded" });
    const message = (error as Error).message;
    expect(message).toMatch(/the plan prompt is about [\d,]+ tokens \([\d,]+ characters\)/);
    expect(message).toContain("context of 1,024 tokens (as the server says)");
    expect(message).toContain("LLM_CONTEXT_TOKENS");
    expect(server.requests).toHaveLength(0);
  });

  it("lowers the output limit to the room the prompt leaves", async () => {
    server.listings = llamaProps(4096);
    server.on("text", "hello");
    const content = "word ".repeat(2_400); // 12,000 bytes: about 4,000 tokens at 3 bytes a token
    await session().generate({
      purpose: "llm_generate",
      messages: [{ role: "user", content: content.slice(0, 9_000) }],
    });
    const sent = server.requests[0]?.body.max_tokens as number;
    expect(sent).toBeLessThan(2048);
    expect(sent).toBeGreaterThanOrEqual(256);
  });

  it("is asked through the worker's lazily loaded adapter too", async () => {
    server.listings = llamaProps(1024);
    const port = lazyOpenAiLlm({ apiKey: "none", baseURL: server.url });
    await expect(port.contextTokens?.("small")).resolves.toBe(1024);
  });

  it("reads Ollama's context of a loaded model from /api/ps", async () => {
    server.listings = {
      "/api/ps": { models: [{ name: "small", model: "small", context_length: 512 }] },
    };
    const error = await plan(session()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_context_exceeded" });
    expect((error as Error).message).toContain("context of 512 tokens");
  });

  it("falls back to LLM_CONTEXT_TOKENS when the server lists no context", async () => {
    const config = loadLlmConfig({ LLM_MODEL: "small", LLM_CONTEXT_TOKENS: "1000" });
    const error = await plan(session(config)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_context_exceeded" });
    expect((error as Error).message).toContain("(as LLM_CONTEXT_TOKENS says)");
    expect(server.requests).toHaveLength(0);
  });

  it("does not measure when the context is unknown", async () => {
    server.queue("plan", goodPlan);
    await expect(plan(session())).resolves.toMatchObject({ reasoning: "one step" });
  });

  it("reads the server's own overflow 400 as llm_context_exceeded", async () => {
    server.queue("plan", {
      fault: "status",
      status: 400,
      message:
        "request (4204 tokens) exceeds the available context size (4096 tokens), try increasing it",
    });
    const error = await plan(session()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_context_exceeded" });
    expect((error as Error).message).toContain("4204 tokens");
    expect((error as Error).message).toContain("LLM_CONTEXT_TOKENS");
    expect(server.requests).toHaveLength(1);
  });
});

describe("answers cut off at the output limit", () => {
  // An inner fragment of a cut plan parses as an array: the old repair said "expected object, received array".
  const cutPlan = new Reply(
    `{"reasoning": "many steps", "plan": [{"seq_no": 0, "type": "assign", "parameters": {"a": [1, 2]}}, {"seq_no": 1`,
    {
      finish_reason: "length",
    },
  );

  it("asks for a shorter plan, naming the tokens it stopped at", async () => {
    server.queue("plan", cutPlan, goodPlan);
    await expect(plan(session())).resolves.toMatchObject({ reasoning: "one step" });
    const repair = server.requests[1]?.messages.at(-1)?.content ?? "";
    expect(repair).toMatch(/^Your answer was cut off at \d+ tokens: write a shorter plan/);
    expect(repair).not.toContain("expected object");
  });

  it("fails llm_output_cut_off, naming the setting, when every answer is cut", async () => {
    server.queue("plan", cutPlan, cutPlan, cutPlan);
    const error = await plan(session()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_output_cut_off" });
    expect((error as Error).message).toContain("LLM_MAX_OUTPUT_TOKENS='plan=");
  });

  it("reads llama.cpp's 500 for a structured answer it could not parse as a cut answer, and asks for less", async () => {
    const unreadable = {
      fault: "500",
      message:
        "The model produced output that does not match the expected peg-native format. Reason: the answer stopped",
    } as const;
    server.queue("plan", unreadable, goodPlan);
    await expect(plan(session())).resolves.toMatchObject({ reasoning: "one step" });
    expect(server.requests).toHaveLength(2);
    const repair = server.requests[1]?.messages.at(-1)?.content ?? "";
    expect(repair).toMatch(/^Your answer was cut off at \d+ tokens: write a shorter plan/);
    // Not retried as a server error: every answer unreadable ends the repair rounds.
    server.reset();
    server.queue("plan", unreadable, unreadable, unreadable);
    const error = await plan(session()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_output_cut_off" });
    expect(server.requests).toHaveLength(3);
  });

  it("does not pass a cut text off as a whole one", async () => {
    server.on("text", new Reply("The first half of a long ans", { finish_reason: "length" }));
    const error = await session()
      .generate({ purpose: "llm_generate", messages: [{ role: "user", content: "Write" }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "llm_output_cut_off" });
  });
});

describe("repairs", () => {
  it("send the problems and an excerpt of the refused answer, never the whole", async () => {
    const long = { reasoning: "x".repeat(20_000), plan: "not a list" };
    server.queue("plan", long, goodPlan);
    await plan(session());
    const [first, second] = server.requests;
    const grew = JSON.stringify(second?.messages).length - JSON.stringify(first?.messages).length;
    expect(grew).toBeLessThan(2_000);
    expect(second?.messages.at(-2)?.content).toContain("more characters not repeated");
    expect(second?.messages.at(-1)?.content).toContain("plan: ");
  });

  it("send a plan that fails validation back as an excerpt with its problems", async () => {
    const invalid = {
      reasoning: "y".repeat(10_000),
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: { tool_name: "nope", output_vars: ["final_answer"] },
        },
      ],
    };
    server.queue("plan", invalid, goodPlan);
    await plan(session());
    const second = server.requests[1];
    expect(second?.messages.at(-2)?.content.length).toBeLessThan(1_000);
    expect(second?.messages.at(-1)?.content).toContain("That plan fails validation");
  });
});
