/**
 * CORS for the origins the operator lists (`STACKVM_CORS_ORIGINS`), with Hono's
 * `cors`: a listed origin's preflight answers 204 with what it may send (before
 * any key is asked for, so never 401), and every answer to it names it in
 * `Access-Control-Allow-Origin`. No cookie is involved (a key or a stream token
 * says who calls), so credentials stay off. Requests without an `Origin` (every
 * server, SDK and curl) pass untouched: the middleware's `Vary` after the answer
 * would copy a whole answer once more (`app.ts`).
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { ApiEnv } from "./env";

/** What a page may read off an answer besides the simple headers. */
const EXPOSED = ["x-request-id", "x-stackvm-task-id", "retry-after", "location", "x-should-retry"];

/**
 * @example
 * app.use("*", corsFor(["https://app.example.com"]));
 */
export function corsFor(origins: readonly string[]): MiddlewareHandler<ApiEnv> {
  const listed = new Set(origins);
  const handler = cors({
    origin: (origin) => (listed.has(origin) ? origin : null),
    allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    // The headers a preflight asks for are echoed: SDKs send their own, and none is a credential by itself.
    exposeHeaders: EXPOSED,
    maxAge: 600,
  });
  return async (c, next) => {
    if (!c.req.header("origin")) return next();
    return handler(c, next);
  };
}
