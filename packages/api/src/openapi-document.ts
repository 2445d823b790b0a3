/**
 * The OpenAPI 3.1 document of every route (`GET /openapi.json`), built on its
 * first read: every group's routes registered on an app of their own (the app
 * that answers loads each group on its first request, `lazy-routes.ts`), with
 * the pages that are not JSON API, tags, the answers every route shares and the
 * outgoing webhooks. Loaded on first use: it calls `.openapi()` on schemas,
 * which only works once `@hono/zod-openapi` has extended zod, and a bundle's
 * start does not promise that order.
 */
import { describeNonApiRoutes } from "./docs";
import { newApiApp } from "./lazy-routes";
import { describeJsonBodyAnswers } from "./openapi-answers";
import { completeContract, LICENSE } from "./openapi-contract";
import { API_TAGS, tagRoutes } from "./openapi-tags";
import type { RouteGroup } from "./route-groups";

/** The whole document, its `servers` left for each answer to fill. */
export async function buildDocument(groups: readonly RouteGroup[], maxBodyBytes: number) {
  const app = newApiApp();
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `svm_{tenant}_{secret}`",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "streamToken", {
    type: "apiKey",
    in: "query",
    name: "token",
    description:
      "A stream token (`POST /v1/tasks/{task_id}/stream-token`): reads that one task only, until it expires",
  });
  for (const group of groups) (await group.load())(app);
  describeNonApiRoutes(app);
  tagRoutes(app);
  describeJsonBodyAnswers(app);
  completeContract(app, maxBodyBytes);
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    tags: [...API_TAGS],
    info: {
      title: "StackVM Serverless API",
      version: "1.0.0",
      description:
        "Turns a goal into a plan and runs it one instruction per invocation, committing every step to a branch.",
      license: LICENSE,
    },
    servers: [],
  });
}
