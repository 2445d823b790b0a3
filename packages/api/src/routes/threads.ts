/**
 * Threads: `POST /v1/tasks/{task_id}/continue` starts the next turn of a
 * conversation from a completed task's answer; `GET /v1/threads` and
 * `GET /v1/threads/{thread_id}` list them and show their turns
 * (`service/threads.ts`).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ContinueTaskInput, Status } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import {
  bearer,
  commonErrors,
  conflictError,
  invalidError,
  json,
  Paging,
  TaskIdParam,
} from "../schemas";
import type { THREADS_ROUTES } from "./threads.paths";

const Continued = z
  .object({
    task_id: z.string(),
    thread_id: z.string(),
    status: Status,
    branch: z.string(),
  })
  .openapi("TurnStarted");

const Thread = z
  .object({
    thread_id: z.string().openapi({ description: "The first turn's task id" }),
    title: z.string(),
    latest_task_id: z.string().openapi({
      description: "The turn started last, which a chat completion naming the thread continues",
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Thread");

const Turn = z
  .object({
    task_id: z.string(),
    turn: z.number().int(),
    parent: z
      .object({ task_id: z.string(), branch: z.string() })
      .nullable()
      .openapi({ description: "The task and branch whose answer this turn continues" }),
    goal: z.string().nullable(),
    status: z.string(),
    final_answer: z.unknown().nullable(),
    created_at: z.string(),
  })
  .openapi("ThreadTurn");

const ThreadView = Thread.extend({
  turns: z.array(Turn),
  lines: z.array(z.array(z.string())).openapi({
    description:
      "Each line of the thread, first turn to last, as task ids: continuing a fork of a turn starts a new line",
  }),
}).openapi("ThreadWithTurns");

const ThreadIdParam = z.object({
  thread_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "thread_id", in: "path" } }),
});

export function registerThreadRoutes(app: ApiApp, routes: typeof THREADS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.continueTask,
      summary: "Continue a completed task as the next turn of its thread",
      description:
        "Starts a new task, the next turn of the task's thread, whose goal is `goal` and whose inputs are the " +
        "variables of the continued branch (its result branch unless `branch` names another): its planner is " +
        "shown the earlier turns' goals and answers, and its steps read the earlier turns' variables as " +
        "`${name}`. The turn is an ordinary task (commits, usage, forks); continuing a fork of a turn starts " +
        "a new line of the thread. A task still queued, running or waiting answers 409 `task_not_finished`; " +
        "one that failed or was cancelled, 409 `task_not_completed`. With an `Idempotency-Key` header, the " +
        "same key and body on the same task answer the same turn (200).",
      security: bearer,
      request: {
        params: TaskIdParam,
        body: {
          required: true,
          content: {
            "application/json": {
              schema: ContinueTaskInput,
              example: { goal: "Now double it." },
            },
          },
        },
        headers: z.object({ "idempotency-key": z.string().max(255).optional() }),
      },
      responses: {
        202: json(Continued, "The next turn, started"),
        200: json(Continued, "The turn this Idempotency-Key started before"),
        ...commonErrors,
        ...conflictError,
        ...invalidError,
      },
    }),
    async (c) => {
      const { task_id } = c.req.valid("param");
      const key = c.req.valid("header")["idempotency-key"] ?? null;
      const started = await c
        .get("deps")
        .threads.continue(c.get("tenantId"), task_id, c.req.valid("json"), key);
      return c.json(
        {
          task_id: started.task.task_id,
          thread_id: started.thread_id,
          status: started.task.status,
          branch: started.task.branch,
        },
        started.replayed ? 200 : 202,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.listThreads,
      summary: "List threads (tasks continued at least once)",
      security: bearer,
      request: { query: Paging },
      responses: {
        200: json(
          z.object({ threads: z.array(Thread), next_cursor: z.string().nullable() }),
          "A page of threads",
        ),
        ...commonErrors,
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const page = await c
        .get("deps")
        .threads.list(c.get("tenantId"), { limit: q.limit, cursor: q.cursor ?? null });
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.getThread,
      summary: "Read a thread: its turns and its lines",
      security: bearer,
      request: { params: ThreadIdParam },
      responses: { 200: json(ThreadView, "The thread"), ...commonErrors },
    }),
    async (c) => {
      const thread = await c
        .get("deps")
        .threads.get(c.get("tenantId"), c.req.valid("param").thread_id);
      return c.json(thread, 200);
    },
  );
}
