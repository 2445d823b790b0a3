/**
 * What makes `/openapi.json` a contract a generator can use, added to every route
 * in one place when the document is built (as `openapi-tags.ts` tags them): a
 * `security: []` on the routes that take no API key, the 413 that the body limit
 * gives any route with a body, and the outgoing webhook as a `webhooks` entry.
 * Each route's stable `operationId` (the method names of a generated client) is
 * its name in its file's declaration (`routes/*.paths.ts`), and the pages that
 * are not JSON API name theirs in `docs.ts`; a route with none fails a test of
 * the document.
 */
import { z } from "@hono/zod-openapi";
import { Task } from "@stackvm/core/api-records";
import type { ApiApp } from "./env";
import { errorAnswer } from "./openapi-answers";

/** The license the document names (the project's LICENSE file). */
export const LICENSE = { name: "MIT", identifier: "MIT" } as const;

const tooLarge = (path: string, maxBytes: number) =>
  errorAnswer(
    path,
    `The request body is over the limit (\`too_large\`; ${maxBytes} bytes for JSON)`,
  );

/** Applies public security and the body limit's 413 to every route of the registry. */
export function completeContract(app: ApiApp, maxBodyBytes: number): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const route = definition.route;
    // A route with no API key says so, instead of inheriting nothing.
    route.security ??= [];
    if (route.request?.body && !route.responses[413]) {
      route.responses = { ...route.responses, 413: tooLarge(route.path, maxBodyBytes) };
    }
  }
  registerTaskWebhook(app);
}

/** The `POST` a task's `webhook_url` receives, signed as Standard Webhooks. */
function registerTaskWebhook(app: ApiApp): void {
  app.openAPIRegistry.registerWebhook({
    method: "post",
    path: "task-event",
    operationId: "taskEvent",
    summary: "A task ended, or one of its branches waits for an answer",
    description:
      "Sent to the task's `webhook_url` (and a trigger's or schedule's) when the task ends (`task.completed`, `task.failed`, `task.cancelled`) or waits for a person (`task.waiting`). Signed with the tenant's secret (`GET /v1/webhook-secret`) as Standard Webhooks: check `webhook-signature` over `{webhook-id}.{webhook-timestamp}.{body}`. A receiver that does not answer 2xx is retried with the same `webhook-id`.",
    security: [],
    request: {
      headers: z.object({
        "webhook-id": z.string().openapi({ description: "The same on every retry of a delivery" }),
        "webhook-timestamp": z.string().openapi({ description: "Unix seconds" }),
        "webhook-signature": z.string().openapi({ description: "`v1,{base64 HMAC-SHA256}`" }),
      }),
      body: {
        required: true,
        content: {
          "application/json": {
            schema: z
              .object({
                type: z.enum(["task.completed", "task.failed", "task.cancelled", "task.waiting"]),
                data: Task,
              })
              .openapi("TaskWebhookEvent"),
          },
        },
      },
    },
    responses: {
      200: { description: "Received: any 2xx ends the delivery" },
      default: { description: "Anything else: the delivery is tried again later" },
    },
  });
}
