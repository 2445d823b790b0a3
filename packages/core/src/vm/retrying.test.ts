import { describe, expect, it } from "vitest";
import { RetryableError, StepError } from "../errors";
import { withRetries } from "../llm/retry";
import { isLlmUnreachable, retryDelaySeconds, unreachableFailure } from "./retrying";

const down = new RetryableError(
  "llm_unreachable",
  "the LLM server at http://x/v1 could not be reached",
);
const limited = new RetryableError("llm_rate_limited", "429", 7);

describe("retry delays", () => {
  it("wait 5 s doubling per attempt up to 2 min, or what Retry-After asked", () => {
    const store = new RetryableError("store_busy", "throttled");
    expect([1, 2, 3, 4, 9].map((n) => retryDelaySeconds(store, n, 0, 60_000))).toEqual([
      5, 10, 20, 40, 120,
    ]);
    expect(retryDelaySeconds(limited, 3, 0, 60_000)).toBe(7);
  });

  it("bring the last attempt of an unreachable LLM to the end of its bound, never later", () => {
    expect(retryDelaySeconds(down, 4, 50_000, 60_000)).toBe(10);
    expect(retryDelaySeconds(down, 1, 0, 2_000)).toBe(2);
    expect(retryDelaySeconds(down, 1, 5_000, 2_000)).toBe(1);
  });
});

describe("an unreachable LLM", () => {
  it("is a server that gives no answer at all, not a slow one, a 5xx or a refusal", () => {
    expect(isLlmUnreachable(down)).toBe(true);
    // Slow is not down: a server that accepted the request and is still writing works.
    expect(isLlmUnreachable(new RetryableError("llm_timeout", "no answer in time"))).toBe(false);
    expect(isLlmUnreachable(new RetryableError("llm_server_error", "500"))).toBe(false);
    expect(isLlmUnreachable(limited)).toBe(false);
    expect(isLlmUnreachable(new StepError("llm_unreachable", "a step error"))).toBe(false);
  });

  it("fails the branch once it has failed for longer than the bound (counted from the first failure, or the step's start), with the cause", () => {
    const since = Date.parse("2026-01-01T00:00:00.000Z");
    const at = (s: number) => since + s * 1000;
    expect(unreachableFailure(since, down, at(59), 60_000)).toBeNull();
    expect(unreachableFailure(since, limited, at(600), 60_000)).toBeNull();
    const failure = unreachableFailure(since, down, at(61), 60_000);
    expect(failure).toMatchObject({ kind: "forbidden", code: "llm_unreachable" });
    expect(failure!.message).toMatch(/could not be reached for 61 s \(the limit is 60 s/);
    expect(failure!.message).not.toMatch(/fork/i);
    // The advice fits either provider: an OpenAI-compatible server or Bedrock.
    expect(failure!.message).toMatch(/OPENAI_BASE_URL, or Bedrock/);
  });
});

describe("retries inside a step", () => {
  it("stop before the bound instead of sleeping past it", async () => {
    let clock = 0;
    let attempts = 0;
    const slept: number[] = [];
    const failing = withRetries(
      async () => {
        attempts++;
        throw down;
      },
      {
        maxAttempts: 10,
        baseDelayMs: 1_000,
        maxDelayMs: 1_000,
        maxRetryAfterSeconds: 60,
        random: () => 0.99,
        sleep: async (ms) => {
          slept.push(ms);
          clock += ms;
        },
        now: () => clock,
        giveUpAt: 2_500,
      },
    );
    await expect(failing).rejects.toBe(down);
    expect(attempts).toBe(3);
    expect(slept).toEqual([990, 990]);
  });
});
