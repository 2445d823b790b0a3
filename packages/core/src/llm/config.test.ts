import { describe, expect, it } from "vitest";
import { DEFAULT_OUTPUT_TOKENS, LlmConfig, loadLlmConfig, OUTPUT_PURPOSES } from "./config";
import { costUsd, priceOf } from "./cost";

describe("loadLlmConfig", () => {
  it("defaults the reason model to LLM_MODEL and the eval model to the reason model", () => {
    expect(loadLlmConfig({ LLM_MODEL: "m1" }).models).toEqual({
      default: "m1",
      reason: "m1",
      eval: "m1",
    });
    expect(loadLlmConfig({ LLM_MODEL: "m1", REASON_LLM_MODEL: "m2" }).models).toEqual({
      default: "m1",
      reason: "m2",
      eval: "m2",
    });
  });

  it("applies the documented defaults", () => {
    const config = loadLlmConfig({ LLM_MODEL: "m1", EVAL_LLM_MODEL: "" });
    expect(config).toMatchObject({
      timeoutMs: 60_000,
      maxAttempts: 4,
      repairRounds: 2,
      prices: {},
    });
    expect(config.models.eval).toBe("m1");
  });

  it("reads timeouts, attempts, rounds and prices", () => {
    const config = loadLlmConfig({
      LLM_MODEL: "m1",
      LLM_TIMEOUT_MS: "1500",
      LLM_MAX_ATTEMPTS: "2",
      LLM_REPAIR_ROUNDS: "0",
      LLM_PRICES: '{"m1": {"input": 1, "output": 2}}',
    });
    expect(config).toMatchObject({
      timeoutMs: 1500,
      maxAttempts: 2,
      repairRounds: 0,
      prices: { m1: { input: 1, output: 2 } },
    });
  });

  it.each([
    [{}, /LLM_MODEL is not set/],
    [{ LLM_MODEL: "  " }, /LLM_MODEL is not set/],
    [{ LLM_MODEL: "m", LLM_TIMEOUT_MS: "soon" }, /LLM_TIMEOUT_MS must be a whole number.*'soon'/],
    [{ LLM_MODEL: "m", LLM_TIMEOUT_MS: "0" }, /LLM_TIMEOUT_MS .*at least 1/],
    [{ LLM_MODEL: "m", LLM_MAX_ATTEMPTS: "11" }, /LLM_MAX_ATTEMPTS .*1 to 10/],
    [{ LLM_MODEL: "m", LLM_PRICES: "{" }, /LLM_PRICES is not JSON/],
    [{ LLM_MODEL: "m", LLM_PRICES: '{"m": {"input": -1, "output": 1}}' }, /LLM_PRICES .*m\.input/],
    [{ LLM_MODEL: "m", LLM_PRICES: '{"m": {"in": 1}}' }, /LLM_PRICES is not a price table/],
  ])("refuses %j naming the setting", (env, message) => {
    expect(() => loadLlmConfig(env)).toThrow(message);
  });

  it("throws a ValidationError with code invalid_config", () => {
    expect(() => loadLlmConfig({})).toThrow(
      expect.objectContaining({ kind: "invalid", code: "invalid_config" }),
    );
  });
});

describe("costUsd", () => {
  const prices = LlmConfig.parse({ models: { default: "a", reason: "a", eval: "a" } }).prices;

  it("prices built-in models per million tokens", () => {
    expect(costUsd("gpt-4o-mini", 1_000_000, 500_000, prices)).toBeCloseTo(0.45, 10);
  });

  it("prices a dated snapshot as its base model", () => {
    expect(priceOf("gpt-4o-2024-08-06", prices)).toEqual({ input: 2.5, output: 10 });
  });

  it("lets configuration override and extend the built-in table", () => {
    const custom = { "gpt-4o-mini": { input: 1, output: 1 }, local: { input: 2, output: 4 } };
    expect(costUsd("gpt-4o-mini", 1_000_000, 0, custom)).toBe(1);
    expect(costUsd("local", 500_000, 250_000, custom)).toBe(2);
  });

  it("prices Bedrock models, and an inference profile as its model", () => {
    const haiku = "anthropic.claude-3-5-haiku-20241022-v1:0";
    expect(priceOf(haiku, prices)).toEqual({ input: 0.8, output: 4 });
    expect(priceOf(`us.${haiku}`, prices)).toEqual({ input: 0.8, output: 4 });
    expect(costUsd("eu.amazon.nova-lite-v1:0", 1_000_000, 1_000_000, prices)).toBeCloseTo(0.3, 10);
    expect(priceOf("meta.llama3-1-8b-instruct-v1:0", prices)).toEqual({
      input: 0.22,
      output: 0.22,
    });
    // Configuration wins over the Bedrock table too, by the id as configured.
    const custom = { [`us.${haiku}`]: { input: 1, output: 1 } };
    expect(costUsd(`us.${haiku}`, 1_000_000, 0, custom)).toBe(1);
  });

  it("costs 0 for an unknown model", () => {
    expect(costUsd("amazon.unknown-model-v9:0", 10_000, 10_000, prices)).toBe(0);
    expect(costUsd("llama3:8b", 10_000, 10_000, prices)).toBe(0);
  });
});

describe("output limits and the context", () => {
  it("defaults every purpose's output limit to one that fits a 4,096-token server", () => {
    const { outputTokens, contextTokens } = loadLlmConfig({ LLM_MODEL: "m" });
    expect(outputTokens).toEqual(DEFAULT_OUTPUT_TOKENS);
    expect(Object.keys(outputTokens).sort()).toEqual([...OUTPUT_PURPOSES].sort());
    expect(Math.max(...Object.values(outputTokens))).toBeLessThanOrEqual(2048);
    expect(contextTokens).toBeUndefined();
  });

  it.each([
    ["a list", "plan=4096, generate=100"],
    ["JSON", '{"plan": 4096, "generate": 100}'],
  ])("reads LLM_MAX_OUTPUT_TOKENS as %s, keeping the defaults of the others", (_, raw) => {
    const config = loadLlmConfig({
      LLM_MODEL: "m",
      LLM_MAX_OUTPUT_TOKENS: raw,
      LLM_CONTEXT_TOKENS: "8192",
    });
    expect(config.outputTokens).toEqual({ ...DEFAULT_OUTPUT_TOKENS, plan: 4096, generate: 100 });
    expect(config.contextTokens).toBe(8192);
  });

  it.each([
    ["plans=100", /unknown purpose 'plans'.*purposes: plan, plan_update/],
    ["plan=0", /plan must be a whole number of tokens, at least 1; got '0'/],
    ["plan=lots", /plan must be a whole number of tokens/],
    ['{"plan": 1.5}', /plan must be a whole number/],
    ["{plan", /LLM_MAX_OUTPUT_TOKENS is not JSON/],
  ])("refuses LLM_MAX_OUTPUT_TOKENS=%s saying what is wrong", (raw, message) => {
    expect(() => loadLlmConfig({ LLM_MODEL: "m", LLM_MAX_OUTPUT_TOKENS: raw })).toThrow(message);
  });

  it("refuses an LLM_CONTEXT_TOKENS too small to hold a prompt", () => {
    expect(() => loadLlmConfig({ LLM_MODEL: "m", LLM_CONTEXT_TOKENS: "100" })).toThrow(
      /LLM_CONTEXT_TOKENS must be a whole number of tokens, at least 256; got '100'/,
    );
  });
});
