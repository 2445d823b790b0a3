/**
 * The HTTP API (`shared/spec/http-api.md`) as one Hono app, the same on Lambda and
 * on a laptop. Every route is declared with `@hono/zod-openapi` from the zod schemas
 * that validate it, so `/openapi.json` cannot drift from what the API accepts.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { secureHeaders } from "hono/secure-headers";
import { allowedMethods } from "./allowed-methods";
import { ANONYMOUS_REQUESTS_PER_SECOND, anonymousLimit, SourceWindows } from "./anonymous-limit";
import { requireOperator, requireTenant } from "./auth";
import type { ApiDeps } from "./deps";
import { registerDocs } from "./docs";
import type { ApiEnv } from "./env";
import { errorBody, malformedBody, notFound, onError } from "./errors";
import { checkJsonBody } from "./json-body";
import { openAiErrorShape } from "./openai/errors";
import { describeJsonBodyAnswers } from "./openapi-answers";
import { completeContract, LICENSE } from "./openapi-contract";
import { API_TAGS, tagRoutes } from "./openapi-tags";
import { rateLimit } from "./rate-limit";
import { requestIdOf } from "./request-id";
import { registerBlobRoutes } from "./routes/blobs";
import { registerBranchRoutes } from "./routes/branches";
import { registerDoctorRoutes } from "./routes/doctor";
import { registerEventRoutes } from "./routes/events";
import { registerKeyRoutes } from "./routes/keys";
import { DOCUMENTS_PATH, registerKnowledgeRoutes, uploadBodyLimit } from "./routes/knowledge";
import { registerLlmCallRoutes } from "./routes/llm-calls";
import { registerNamespaceRoutes } from "./routes/namespaces";
import { registerOpenAiRoutes } from "./routes/openai";
import { registerPlanRoutes } from "./routes/plans";
import { registerRetryRoutes } from "./routes/retry";
import { registerScheduleRoutes } from "./routes/schedules";
import { registerTaskRoutes } from "./routes/tasks";
import { registerTemplateRoutes } from "./routes/templates";
import { registerToolSourceRoutes } from "./routes/tool-sources";
import { registerTriggerRoutes } from "./routes/triggers";
import { registerUiRoutes } from "./routes/ui";
import { registerWaitRoutes } from "./routes/waits";
import { registerWebhookRoutes } from "./routes/webhooks";

/** Incoming webhooks carry a signature instead of an API key (routes/triggers.ts checks it). */
const HOOKS = /^\/v1\/hooks\//;
/** Resume URLs carry a signed single-use token instead of an API key (routes/waits.ts checks it). */
const RESUME = /^\/v1\/resume\//;
/** Operator routes take the admin key instead of a tenant's. */
const ADMIN = /^\/v1\/admin\//;

export function createApp(deps: ApiDeps): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>({
    defaultHook: (result, c) => {
      if (!result.success) return c.json(malformedBody(result.error.issues), 400);
    },
  });

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
  // The OpenAI-compatible routes answer every error (the body limit's and the key
  // check's too, so it wraps them) in OpenAI's shape.
  app.use("/v1/*", openAiErrorShape);
  const generalLimit = bodyLimit({
    maxSize: deps.config.maxBodyBytes,
    onError: (c) => {
      // The rest of the body is never read, so the server closes the connection after
      // this answer: say so, or a client reuses a socket that is about to close.
      c.header("connection", "close");
      return c.json(
        errorBody("too_large", `the request body is over ${deps.config.maxBodyBytes} bytes`),
        413,
      );
    },
  });
  // Document uploads have their own, larger limit (STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES).
  const uploadLimit = uploadBodyLimit(deps.config.maxUploadBytes ?? deps.config.maxBodyBytes);
  app.use("*", (c, next) =>
    c.req.method === "POST" && DOCUMENTS_PATH.test(c.req.path)
      ? uploadLimit(c, next)
      : generalLimit(c, next),
  );
  // Every `/v1` route is authenticated here, once: no route adds its own check.
  // The routes without a key are counted by source address before anything is looked up.
  const anonymous = anonymousLimit(
    new SourceWindows(deps.config.anonymousRequestsPerSecond ?? ANONYMOUS_REQUESTS_PER_SECOND),
  );
  app.use("/v1/*", async (c, next) => {
    if (HOOKS.test(c.req.path) || RESUME.test(c.req.path)) return anonymous(c, next);
    if (ADMIN.test(c.req.path)) return requireOperator(c, next);
    return requireTenant(c, next);
  });
  app.use("/v1/*", rateLimit);
  // Depth and forbidden keys of every JSON body, checked once for all routes.
  app.use("*", checkJsonBody);

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `svm_{tenant}_{secret}`",
  });

  registerTaskRoutes(app);
  registerBranchRoutes(app);
  registerRetryRoutes(app);
  registerBlobRoutes(app);
  registerLlmCallRoutes(app);
  registerNamespaceRoutes(app);
  registerToolSourceRoutes(app);
  registerPlanRoutes(app);
  registerKeyRoutes(app);
  registerTriggerRoutes(app);
  registerScheduleRoutes(app);
  registerWebhookRoutes(app);
  registerWaitRoutes(app);
  registerDocs(app);
  registerUiRoutes(app, deps);
  registerTemplateRoutes(app);
  registerEventRoutes(app);
  registerKnowledgeRoutes(app);
  registerDoctorRoutes(app);
  registerOpenAiRoutes(app);

  tagRoutes(app);
  describeJsonBodyAnswers(app);
  completeContract(app, deps.config.maxBodyBytes);
  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    tags: [...API_TAGS],
    info: {
      title: "StackVM Serverless API",
      version: "1.0.0",
      description:
        "Turns a goal into a plan and runs it one instruction per invocation, committing every step to a branch.",
      license: LICENSE,
    },
    // The origin this document was read from: the one its routes answer on.
    servers: [
      { url: deps.config.publicUrl ?? new URL(c.req.url).origin, description: "This service" },
    ],
  }));

  const allowed = allowedMethods(app);
  app.notFound((c) => notFound(c, allowed(c.req.path)));
  app.onError(onError);
  return app;
}
