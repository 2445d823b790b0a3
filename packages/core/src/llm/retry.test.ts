import { describe, expect, it } from "vitest";
import { RetryableError, StepError } from "../errors";
import { type RetryPolicy, withRetries } from "./retry";

function policy(overrides: Partial<RetryPolicy> = {}) {
  const waits: number[] = [];
  const p: RetryPolicy = {
    maxAttempts: 4,
    baseDelayMs: 500,
    maxDelayMs: 20_000,
    maxRetryAfterSeconds: 60,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  };
  return { p, waits };
}

/** An attempt function that throws the given errors, then answers "ok". */
function failing(...errors: Error[]) {
  let n = 0;
  return async () => {
    const error = errors[n++];
    if (error) throw error;
    return "ok";
  };
}

describe("withRetries", () => {
  it("backs off exponentially with full jitter", async () => {
    const { p, waits } = policy({ random: () => 0.999 });
    const transient = () => new RetryableError("llm_server_error", "503");
    const result = await withRetries(failing(transient(), transient(), transient()), p);
    expect(result).toEqual({ value: "ok", attempts: 4 });
    expect(waits).toEqual([499, 999, 1998]);
  });

  it("caps the backoff ceiling", async () => {
    const { p, waits } = policy({ maxDelayMs: 700, random: () => 0.999 });
    const transient = () => new RetryableError("llm_server_error", "503");
    await withRetries(failing(transient(), transient(), transient()), p);
    expect(waits).toEqual([499, 699, 699]);
  });

  it("waits what Retry-After says", async () => {
    const { p, waits } = policy();
    const result = await withRetries(failing(new RetryableError("llm_rate_limited", "429", 7)), p);
    expect(result.attempts).toBe(2);
    expect(waits).toEqual([7000]);
  });

  it("hands a Retry-After longer than the cap to the queue", async () => {
    const { p, waits } = policy();
    const error = new RetryableError("llm_rate_limited", "429", 61);
    await expect(withRetries(failing(error), p)).rejects.toBe(error);
    expect(waits).toEqual([]);
  });

  it("rethrows the last transient error when the attempts run out", async () => {
    const { p } = policy({ maxAttempts: 2 });
    const last = new RetryableError("llm_timeout", "second");
    await expect(
      withRetries(failing(new RetryableError("llm_timeout", "first"), last), p),
    ).rejects.toBe(last);
  });

  it("does not retry a failure that is not transient", async () => {
    const { p, waits } = policy();
    const error = new StepError("llm_bad_request", "400");
    await expect(withRetries(failing(error), p)).rejects.toBe(error);
    expect(waits).toEqual([]);
  });
});
