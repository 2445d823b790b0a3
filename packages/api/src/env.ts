/**
 * The Hono environment of the API: what the middleware puts on the context.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "./deps";

export interface ApiEnv {
  Variables: {
    /** The tenant of the API key (absent on routes without a key). */
    tenantId: string;
    keyId: string;
    requestId: string;
    deps: ApiDeps;
  };
}

export type ApiApp = OpenAPIHono<ApiEnv>;
