/**
 * `PUT` and `DELETE /v1/tasks/{task_id}/keep`: exempt a task from retention, or
 * let it expire again (docs/observability.md#retention).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { ApiApp } from "../env";
import { bearer, commonErrors, json, TaskIdParam } from "../schemas";
import type { RETENTION_ROUTES } from "./retention.paths";

const Kept = z.object({ keep: z.boolean() }).openapi("TaskKeep");

export function registerRetentionRoutes(app: ApiApp, routes: typeof RETENTION_ROUTES): void {
  for (const [route, keep] of [
    [routes.keepTask, true],
    [routes.unkeepTask, false],
  ] as const) {
    app.openapi(
      createRoute({
        ...route,
        summary: keep
          ? "Keep the task: retention never deletes it"
          : "Let the task expire: a finished task is deleted its retention's days from now",
        security: bearer,
        request: { params: TaskIdParam },
        responses: { 200: json(Kept, keep ? "Kept" : "No longer kept"), ...commonErrors },
      }),
      async (c) => {
        const { task_id } = c.req.valid("param");
        return c.json(await c.get("deps").retention.keep(c.get("tenantId"), task_id, keep), 200);
      },
    );
  }
}
