/**
 * Errors of the OpenAI-compatible routes in OpenAI's shape,
 * `{"error": {"message", "type", "param", "code"}}`, which OpenAI's clients
 * read into their error classes. The API's own errors (`{"error": {"code",
 * "message", "details"}}`, from `app.onError`, the key check, the rate limit)
 * are rewritten on the way out, so that one place still decides every status.
 */
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "../env";

/** OpenAI's error `type` for a status. */
export function openAiErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** An OpenAI-shaped error body; `param` names the request's field at fault, when one is. */
export function openAiErrorBody(
  status: number,
  code: string,
  message: string,
  param: string | null = null,
) {
  return { error: { message, type: openAiErrorType(status), param, code } };
}

/** The field an API error names: `details.param`, or the path of a schema's first issue. */
function paramOf(details: unknown): string | null {
  if (Array.isArray(details)) {
    const path = (details[0] as { path?: unknown } | undefined)?.path;
    return Array.isArray(path) && path.length > 0 ? path.join(".") : null;
  }
  const param = (details as { param?: unknown } | null | undefined)?.param;
  return typeof param === "string" ? param : null;
}

/** Paths whose errors answer in OpenAI's shape. */
export const OPENAI_PATHS = /^\/v1\/(chat\/completions|models)$/;

/** Rewrites the API's error answers on the OpenAI-compatible paths into OpenAI's shape. */
export const openAiErrorShape: MiddlewareHandler<ApiEnv> = async (c, next) => {
  await next();
  if (!OPENAI_PATHS.test(c.req.path) || c.res.status < 400) return;
  if (!c.res.headers.get("content-type")?.includes("application/json")) return;
  const body = (await c.res.clone().json()) as {
    error?: { code?: unknown; message?: unknown; details?: unknown };
  };
  const error = body?.error;
  if (!error || typeof error.message !== "string" || "type" in error) return;
  const headers = new Headers(c.res.headers);
  headers.delete("content-length");
  c.res = new Response(
    JSON.stringify(
      openAiErrorBody(
        c.res.status,
        String(error.code ?? "error"),
        error.message as string,
        paramOf(error.details),
      ),
    ),
    { status: c.res.status, headers },
  );
};
