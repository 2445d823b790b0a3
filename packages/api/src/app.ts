/**
 * The HTTP API (`shared/spec/http-api.md`) as one Hono app, the same on Lambda and
 * on a laptop. Every route is declared with `@hono/zod-openapi` from the zod schemas
 * that validate it, so `/openapi.json` cannot drift from what the API accepts. The
 * middleware is built at start; each group of routes loads on its first request
 * (`lazy-routes.ts`), and the document on its first read.
 */
import { loadOnce } from "@stackvm/core";
import { secureHeaders } from "hono/secure-headers";
import { allowedMethods } from "./allowed-methods";
import { ANONYMOUS_REQUESTS_PER_SECOND, anonymousLimit, SourceWindows } from "./anonymous-limit";
import { requireOperator, requireTenant } from "./auth";
import { bodyLimits } from "./body-limits";
import { corsFor } from "./cors";
import type { ApiDeps } from "./deps";
import { registerDocs } from "./docs";
import type { ApiApp } from "./env";
import { notFound, onError } from "./errors";
import { checkJsonBody } from "./json-body";
import { newApiApp, registerLazyRoutes } from "./lazy-routes";
import { MCP_PATH, mcpErrorShape } from "./mcp/errors";
import { openAiErrorShape } from "./openai/errors";
import { rateLimit } from "./rate-limit";
import { requestIdOf } from "./request-id";
import { ROUTE_GROUPS } from "./route-groups";
import { registerUiRoutes } from "./routes/ui";

/** Incoming webhooks carry a signature instead of an API key (routes/triggers.ts checks it). */
const HOOKS = /^\/v1\/hooks\//;
/** Resume URLs carry a signed single-use token instead of an API key (routes/waits.ts checks it). */
const RESUME = /^\/v1\/resume\//;
/** Operator routes take the admin key instead of a tenant's. */
const ADMIN = /^\/v1\/admin\//;

export function createApp(deps: ApiDeps): ApiApp {
  const app = newApiApp();

  // On every answer, errors included: no content sniffing (a JSON answer is never
  // read as a page or a script), no framing, no referrer; HTTPS only once seen.
  app.use("*", secureHeaders({ xFrameOptions: "DENY" }));
  app.use("*", async (c, next) => {
    c.set("deps", deps);
    c.set("requestId", requestIdOf(c.req.header("x-request-id")));
    const started = Date.now();
    await next();
    // On the answer's own headers: `c.header` after the answer is made would copy
    // it into a new one, turning its text into a stream that the server then reads
    // back whole (a third of the time of a 2 MB state).
    c.res.headers.set("x-request-id", c.get("requestId"));
    deps.log.info("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Date.now() - started,
      ...(c.get("tenantId") ? { tenant_id: c.get("tenantId") } : {}),
    });
  });
  // Pages of the origins the operator listed; their preflights answer before any key check.
  if (deps.config.corsOrigins?.length) app.use("*", corsFor(deps.config.corsOrigins));
  // The OpenAI-compatible routes answer every error (the body limit's and the key
  // check's too, so it wraps them) in OpenAI's shape.
  app.use("/v1/*", openAiErrorShape);
  // The MCP face answers its errors as JSON-RPC errors (mcp/errors.ts).
  app.use(MCP_PATH, mcpErrorShape);
  // Document uploads have their own, larger limit (STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES).
  app.use(
    "*",
    bodyLimits(deps.config.maxBodyBytes, deps.config.maxUploadBytes ?? deps.config.maxBodyBytes),
  );
  // Every `/v1` route is authenticated here, once: no route adds its own check.
  // The routes without a key are counted by source address before anything is looked up.
  const anonymous = anonymousLimit(
    new SourceWindows(deps.config.anonymousRequestsPerSecond ?? ANONYMOUS_REQUESTS_PER_SECOND),
  );
  app.use("/v1/*", async (c, next) => {
    if (HOOKS.test(c.req.path) || RESUME.test(c.req.path)) return anonymous(c, next);
    // A stream token (`?token=`) without a key is counted by source too, before it is checked.
    if (!c.req.header("authorization") && c.req.query("token") !== undefined) {
      return anonymous(c, async () => {
        await requireTenant(c, next);
      });
    }
    if (ADMIN.test(c.req.path)) return requireOperator(c, next);
    return requireTenant(c, next);
  });
  app.use("/v1/*", rateLimit);
  // The MCP face takes the tenant's key as the /v1 routes do, checked before any MCP handling.
  app.use(MCP_PATH, requireTenant, rateLimit);
  // Depth and forbidden keys of every JSON body, checked once for all routes.
  app.use("*", checkJsonBody);

  app.get("/healthz", (c) => c.json({ ok: true }));
  registerLazyRoutes(app, ROUTE_GROUPS);
  registerDocs(app);
  registerUiRoutes(app, deps);
  // Built once, on the first read: it registers every group, and calls `.openapi()`,
  // which a bundle's start cannot promise zod is extended for (openapi-document.ts).
  const document = loadOnce(async () =>
    (await import("./openapi-document")).buildDocument(ROUTE_GROUPS, deps.config.maxBodyBytes),
  );
  app.get("/openapi.json", async (c) => {
    // The origin this document was read from: the one its routes answer on.
    const url = deps.config.publicUrl ?? new URL(c.req.url).origin;
    return c.json({ ...(await document()), servers: [{ url, description: "This service" }] });
  });

  const allowed = allowedMethods(app);
  app.notFound((c) => notFound(c, allowed(c.req.path)));
  app.onError(onError);
  return app;
}
