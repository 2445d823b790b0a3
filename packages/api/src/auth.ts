/**
 * Bearer-key authentication of `/v1` routes, and the operator key of `/v1/admin`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { ForbiddenError, UnauthorizedError } from "@stackvm/core";
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./env";

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

/** Resolves the API key to its tenant; 401 without a valid key. */
export const requireTenant: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const key = bearer(c.req.header("authorization"));
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
