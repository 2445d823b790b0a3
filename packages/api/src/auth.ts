/**
 * Bearer-key authentication of `/v1` routes, the operator key of `/v1/admin`,
 * and stream tokens (`?token=`, `POST /v1/tasks/{id}/stream-token`), which open
 * only the reads of their own task: a page's `EventSource` cannot send a header.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { ForbiddenError, UnauthorizedError } from "@stackvm/core";
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./env";

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

/** Resolves the API key (or a stream token, on its task's reads) to its tenant; 401 without one. */
export const requireTenant: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const key = bearer(c.req.header("authorization"));
  const token = key ? undefined : c.req.query("token");
  if (token !== undefined) return streamToken(c, next, token);
  if (!key) throw new UnauthorizedError();
  const { tenantId, keyId } = await c.get("deps").keys.verify(key);
  c.set("tenantId", tenantId);
  c.set("keyId", keyId);
  await next();
};

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Only the operator key (never a tenant's key) passes. */
export const requireOperator: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const configured = c.get("deps").config.adminKey;
  if (!configured) {
    throw new ForbiddenError(
      "admin routes are off: set STACKVM_ADMIN_KEY to use them",
      "admin_disabled",
    );
  }
  const key = bearer(c.req.header("authorization"));
  if (!key)
    throw new UnauthorizedError(
      "the operator key is required: 'Authorization: Bearer <STACKVM_ADMIN_KEY>'",
    );
  if (!timingSafeEqual(digest(key), digest(configured))) {
    throw new UnauthorizedError("this is not the operator key (tenant keys do not open /v1/admin)");
  }
  await next();
};

/** `/v1/tasks/{id}` and what is under it, with the id as a segment of its own. */
const TASK_PATH = /^\/v1\/tasks\/([^/]+)(?:\/[^/]+)*$/;

/**
 * A stream token in place of a key: valid (signed, unexpired), and the request
 * a read (GET) of the token's own task or something under it. Anything else with
 * a token is refused, whatever the route: a write, another task, another tenant's.
 */
async function streamToken(
  c: Parameters<MiddlewareHandler<ApiEnv>>[0],
  next: () => Promise<void>,
  token: string,
): Promise<void> {
  // The route first, so that a token on a route no token opens (`POST /mcp`, a
  // write) is refused before any tenant's secret is read to check it.
  const match = TASK_PATH.exec(c.req.path);
  const segments = c.req.path.split("/");
  const read = c.req.method === "GET" || c.req.method === "HEAD";
  if (!read || !match || segments.some((s) => s === "." || s === "..")) {
    throw new ForbiddenError(
      "a stream token only reads its own task: GET /v1/tasks/{task_id}, its events and what is under it; use an API key for anything else",
      "stream_token_scope",
    );
  }
  // A page holds the token: the LLM calls' traces (the whole prompts, with the
  // namespace's planner instructions and the tools' descriptions) stay with the key.
  if (segments.includes("llm-calls")) {
    throw new ForbiddenError(
      "a stream token does not open the LLM calls' traces (they hold the whole prompts): read them with an API key, from your server",
      "stream_token_scope",
    );
  }
  const grant = await c.get("deps").streamTokens.verify(token);
  if (!grant) {
    throw new UnauthorizedError(
      "this stream token is not valid: it expired, was altered or was never issued; ask for a new one with POST /v1/tasks/{task_id}/stream-token (with the API key, from your server), or send 'Authorization: Bearer <key>'",
    );
  }
  if (match[1] !== grant.taskId) {
    throw new ForbiddenError(
      `a stream token only reads its own task: GET /v1/tasks/${grant.taskId}, its events and what is under it; use an API key for anything else`,
      "stream_token_scope",
    );
  }
  c.set("tenantId", grant.tenant);
  c.set("keyId", "stream_token");
  await next();
}
