/**
 * Requests per second per tenant (`QuotaService.takeRequest`): past the limit the
 * API answers 429 with `Retry-After` (set by `onError` from the error). It runs
 * after the API key is checked, so the tenant is known, and a request without a
 * valid key costs no count.
 */
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./env";

export const rateLimit: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const tenant = c.get("tenantId");
  if (tenant) await c.get("deps").quotas.takeRequest(tenant);
  await next();
};
