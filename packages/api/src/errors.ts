/**
 * Errors become HTTP in one place. Known errors answer with their status and code,
 * validation failures with 400, anything else is logged and answered with a bare 500.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ZodError } from "zod";
import type { ApiEnv } from "./env";

const STATUS: Record<string, ContentfulStatusCode> = {
  malformed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  invalid: 422,
  rate_limited: 429,
};

export function errorBody(code: string, message: string, details?: unknown) {
  return { error: { code, message, ...(details === undefined ? {} : { details }) } };
}

/** The 400 body of a request that does not match its schema, naming the first five issues. */
export function malformedBody(issues: ZodError["issues"]) {
  return errorBody(
    "malformed_request",
    `the request does not match its schema: ${issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`)
      .join("; ")}`,
    issues,
  );
}

export function onError(error: Error, c: Context<ApiEnv>) {
  const e = error as Error & {
    kind?: string;
    code?: string;
    details?: unknown;
    retryAfterSeconds?: number;
  };
  if (typeof e.kind === "string" && STATUS[e.kind] && typeof e.code === "string") {
    if (e.kind === "rate_limited" && e.retryAfterSeconds !== undefined) {
      c.header("Retry-After", String(Math.max(1, Math.ceil(e.retryAfterSeconds))));
    }
    return c.json(errorBody(e.code, e.message, e.details), STATUS[e.kind]!);
  }
  if (error instanceof ZodError) return c.json(malformedBody(error.issues), 400);
  if (error instanceof HTTPException) {
    const status = error.status as ContentfulStatusCode;
    const code = status === 413 ? "too_large" : status === 400 ? "malformed_request" : "http_error";
    return c.json(errorBody(code, error.message || "bad request"), status);
  }
  c.get("deps")?.log.error("unhandled error", {
    request_id: c.get("requestId"),
    error: { name: error.name, message: error.message, stack: error.stack },
  });
  return c.json(errorBody("internal", "internal error"), 500);
}

export function notFound(c: Context<ApiEnv>) {
  return c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404);
}
