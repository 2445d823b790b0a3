/**
 * Errors become HTTP in one place. Known errors answer with their status and code,
 * validation failures with 400, anything else is logged and answered with a bare 500.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ZodError } from "zod";
import type { ApiEnv } from "./env";
import { jsonProblem } from "./json-position";

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

/**
 * The 400 body for text sent as JSON that is not: where it goes wrong and what
 * was expected there.
 *
 * @example
 * malformedJsonBody('{"goal": x}').error.details // { offset: 9, line: 1, column: 10, … }
 */
export function malformedJsonBody(text: string) {
  if (text.trim() === "") {
    return errorBody(
      "malformed_json",
      "the request body is empty: send a JSON value with Content-Type: application/json",
    );
  }
  const problem = jsonProblem(text) ?? {
    offset: text.length,
    line: text.split("\n").length,
    column: text.length - text.lastIndexOf("\n"),
    expected: "JSON",
  };
  return errorBody(
    "malformed_json",
    `the request body is not valid JSON: at line ${problem.line}, column ${problem.column} (offset ${problem.offset}) expected ${problem.expected}`,
    problem,
  );
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

/** Hono's JSON validator's message for a body it cannot parse (here: an empty one). */
const HONO_MALFORMED_JSON = "Malformed JSON in request body";

export async function onError(error: Error, c: Context<ApiEnv>) {
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
    if (status === 415) return c.json(unsupportedMediaTypeBody(c.req.header("content-type")), 415);
    if (status === 400 && error.message === HONO_MALFORMED_JSON) {
      return c.json(malformedJsonBody(await c.req.text()), 400);
    }
    const code = status === 413 ? "too_large" : status === 400 ? "malformed_request" : "http_error";
    return c.json(errorBody(code, error.message || "bad request"), status);
  }
  c.get("deps")?.log.error("unhandled error", {
    request_id: c.get("requestId"),
    error: { name: error.name, message: error.message, stack: error.stack },
  });
  return c.json(errorBody("internal", "internal error"), 500);
}

/**
 * The 415 of a JSON route whose body came without `Content-Type: application/json`
 * (Hono's validator refuses it before the route runs).
 */
export function unsupportedMediaTypeBody(contentType: string | undefined) {
  const type = (contentType ?? "").split(";")[0]!.trim().slice(0, 100);
  const sent = type ? `as ${type}` : "without a Content-Type";
  return errorBody(
    "unsupported_media_type",
    `the request body was sent ${sent}; this route reads JSON: send the header Content-Type: application/json`,
    { content_type: type || null, expected: "application/json" },
  );
}

/**
 * A path that matches no route answers 404; a path that exists with other
 * methods answers 405 with `Allow` (`allowed` lists them, empty for none).
 */
export function notFound(c: Context<ApiEnv>, allowed: readonly string[] = []) {
  if (allowed.length > 0 && !allowed.includes(c.req.method)) {
    c.header("Allow", allowed.join(", "));
    return c.json(
      errorBody(
        "method_not_allowed",
        `${c.req.path} does not take ${c.req.method}; it takes ${allowed.join(", ")}`,
        { allow: allowed },
      ),
      405,
    );
  }
  return c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404);
}
