/**
 * Requests per second per source address on the routes that take no API key
 * (trigger webhooks `/v1/hooks/…`, resume URLs `/v1/resume/…`): past
 * {@link ANONYMOUS_REQUESTS_PER_SECOND} from one address in one second the API
 * answers 429 with `Retry-After`, before any lookup. 200 forged resume requests
 * in 0.8 s each cost a store read (and once a write); now one address gets 50
 * by default (`STACKVM_ANONYMOUS_RPS`).
 *
 * The count is kept in this process, not in the store: a store count would be a
 * write made for a request nobody has verified, which is what these routes must
 * not do. On AWS each API instance counts apart, and API Gateway's own throttle
 * bounds the whole; the tenant-wide limit of bad trigger signatures
 * (`QuotaService.takeBadSignature`) still holds across instances.
 */
import { RateLimitedError } from "@stackvm/core";
import type { Context, MiddlewareHandler } from "hono";
import type { ApiEnv } from "./env";

/** Requests one address may send to the anonymous routes in one second (`STACKVM_ANONYMOUS_RPS`). */
export const ANONYMOUS_REQUESTS_PER_SECOND = 50;
/** Addresses remembered at once; past it the window starts afresh for all (memory stays bounded). */
const MAX_SOURCES = 10_000;

/** The fixed one-second windows of the sources seen, by address. */
export class SourceWindows {
  readonly #counts = new Map<string, { second: number; count: number }>();

  constructor(
    private readonly limit = ANONYMOUS_REQUESTS_PER_SECOND,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request of `source`; `RateLimitedError` past the limit. */
  take(source: string): void {
    const now = this.now();
    const second = Math.floor(now / 1000);
    const window = this.#counts.get(source);
    if (window?.second === second) {
      if (window.count >= this.limit) {
        throw new RateLimitedError(
          `more than ${this.limit} requests per second from ${source} to the routes without an API key: wait for Retry-After`,
          Math.max(0.001, (1000 - (now % 1000)) / 1000),
          "source_rate_limited",
        );
      }
      window.count++;
      return;
    }
    if (this.#counts.size >= MAX_SOURCES) this.#counts.clear();
    this.#counts.set(source, { second, count: 1 });
  }
}

/**
 * The address a request came from: API Gateway's `sourceIp` on Lambda, the
 * socket's peer on the local Node server; "unknown" when neither says.
 */
export function sourceOf(c: Context<ApiEnv>): string {
  const env = c.env as
    | {
        event?: {
          requestContext?: { http?: { sourceIp?: string }; identity?: { sourceIp?: string } };
        };
        incoming?: { socket?: { remoteAddress?: string } };
      }
    | undefined;
  return (
    env?.event?.requestContext?.http?.sourceIp ??
    env?.event?.requestContext?.identity?.sourceIp ??
    env?.incoming?.socket?.remoteAddress ??
    "unknown"
  );
}

/** The middleware of the anonymous routes: one count per request, by source address. */
export function anonymousLimit(windows = new SourceWindows()): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    windows.take(sourceOf(c));
    await next();
  };
}
