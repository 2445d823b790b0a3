/**
 * Retries of one LLM call inside a step: transient failures (429, 5xx, timeouts,
 * as the adapter classifies them) are tried again after an exponential backoff
 * with full jitter, or after the server's `Retry-After` when it says one. A wait
 * longer than a step should sleep is handed to the queue instead: the error is
 * rethrown and the message comes back later.
 */
import { isErrorKind } from "../errors";

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The backoff ceiling before the first retry; doubles each retry. */
  baseDelayMs: number;
  /** The backoff ceiling never grows past this. */
  maxDelayMs: number;
  /** A longer `Retry-After` is not slept through: the error goes to the queue. */
  maxRetryAfterSeconds: number;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1): picks the wait below the ceiling ("full jitter"). */
  random: () => number;
  /** No retry is started past this moment (epoch ms): a step's bound on an unreachable LLM. */
  giveUpAt?: number;
  now?: () => number;
}

/** The defaults of the LLM layer: 0.5 s, 1 s, 2 s ... up to 20 s; Retry-After up to 60 s. */
export const DEFAULT_RETRY_DELAYS = {
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterSeconds: 60,
} as const;

/**
 * Runs `attempt` until it succeeds, a failure is not transient, or the attempts
 * run out; then rethrows the last error. Returns the value and how many attempts
 * it took.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  policy: RetryPolicy,
): Promise<{ value: T; attempts: number }> {
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (error) {
      const transient = isErrorKind(error, "retryable") || isErrorKind(error, "rate_limited");
      if (!transient || n >= policy.maxAttempts) throw error;
      const retryAfter = (error as { retryAfterSeconds?: number }).retryAfterSeconds;
      if (retryAfter !== undefined && retryAfter > policy.maxRetryAfterSeconds) throw error;
      const wait =
        retryAfter !== undefined ? retryAfter * 1000 : backoffMs(n, policy.random, policy);
      if (policy.giveUpAt !== undefined && (policy.now ?? Date.now)() + wait >= policy.giveUpAt) {
        throw error;
      }
      await policy.sleep(wait);
    }
  }
}

/** Full jitter: a uniform wait below min(maxDelay, base * 2^(n-1)) after attempt n. */
function backoffMs(
  n: number,
  random: () => number,
  delays: { baseDelayMs: number; maxDelayMs: number },
): number {
  const ceiling = Math.min(delays.maxDelayMs, delays.baseDelayMs * 2 ** (n - 1));
  return Math.floor(random() * ceiling);
}
