/**
 * `POST /v1/tasks/{task_id}/retry`: runs an ended task again, from the start or
 * from its last commit, on a new branch that becomes its result (`service/retry.ts`).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { RetryInput } from "@stackvm/core";
import { Branch } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import { bearer, commonErrors, conflictError, invalidError, json, TaskIdParam } from "../schemas";
import type { RETRY_ROUTES } from "./retry.paths";

export function registerRetryRoutes(app: ApiApp, routes: typeof RETRY_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.retryTask,
      summary: "Run an ended task again, from the start or from its last commit",
      description:
        'Body `{"from": "start" | "last_commit"}` (default `last_commit`). `start`: a new branch with no ' +
        "commits; the planner writes a new plan from the goal (a task given a plan runs that plan again). " +
        "`last_commit`: a fork that runs again from the result branch's last commit, so the step that failed " +
        "runs again; a task that has no plan yet (it failed while planning) starts over as with `start`. " +
        "The new branch becomes the task's result branch at once. A task that is still queued, running or " +
        "waiting answers 409 (`task_not_ended`): cancel it first. `last_commit` on a task that completed " +
        'answers 422 (`nothing_to_run`): retry with `"start"`, or fork an earlier commit. A retry is a new ' +
        "run for the quotas: 429 (`monthly_budget_exhausted`) when the month's budget is spent; it takes a " +
        "running slot, or the branch and the task are `queued` (with `waiting_for_slot`) until one frees; " +
        "its usage counts for the month. With an `Idempotency-Key` header, the same " +
        "key answers the branch it made (200) instead of making another; the same key with another body " +
        "answers 409 `idempotency_key_reused`, as for tasks.",
      security: bearer,
      request: {
        params: TaskIdParam,
        body: {
          required: false,
          content: {
            "application/json": { schema: RetryInput, example: { from: "last_commit" } },
          },
        },
        headers: z.object({ "idempotency-key": z.string().max(255).optional() }),
      },
      responses: {
        202: json(Branch, "The new branch, now the task's result branch"),
        200: json(Branch, "The branch this Idempotency-Key made before"),
        ...commonErrors,
        ...conflictError,
        ...invalidError,
      },
    }),
    async (c) => {
      const { task_id } = c.req.valid("param");
      const input = c.req.valid("json") ?? {};
      const key = c.req.valid("header")["idempotency-key"] ?? null;
      const { branch, replayed } = await c
        .get("deps")
        .retries.retry(c.get("tenantId"), task_id, input, key);
      return c.json(branch, replayed ? 200 : 202);
    },
  );
}
