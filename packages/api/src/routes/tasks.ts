/**
 * `/v1/tasks`: start, list, read, cancel, delete.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { CreateTaskInput, Status, Task } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import { createTaskExample, taskCreatedExample, taskExample } from "../examples";
import {
  bearer,
  bearerOrStreamToken,
  commonErrors,
  ErrorBody,
  invalidError,
  json,
  Paging,
  TaskIdParam,
} from "../schemas";
import { PlanProblemSchema } from "./plans";
import type { TASKS_ROUTES } from "./tasks.paths";

const Created = z
  .object({
    task_id: z.string(),
    status: Status,
    branch: z.string(),
    warnings: z.array(PlanProblemSchema).openapi({
      description:
        "What the plan validator noted about a given plan (StackVM forms rewritten, ignored keys, instructions never reached), as POST /v1/plans/validate answers them; empty for a goal",
    }),
  })
  .openapi("TaskCreated");

/** The longest long poll, in seconds: well inside any API timeout (30 s on a Lambda function URL's client, 5 minutes on AWS). */
export const MAX_WAIT_SECONDS = 60;
/** How often a long poll reads the task while it waits. */
const WAIT_POLL_MS = 250;

const WAIT_RANGE = `wait is whole seconds from 1 to ${MAX_WAIT_SECONDS}, given once (e.g. ?wait=20)`;

const TaskWaitQuery = z.object({
  wait: z.coerce
    .number({ error: WAIT_RANGE })
    .int({ error: WAIT_RANGE })
    .min(1, { error: WAIT_RANGE })
    .max(MAX_WAIT_SECONDS, { error: WAIT_RANGE })
    .optional()
    .openapi({
      description: `Seconds (1 to ${MAX_WAIT_SECONDS}) to wait for the task to end or to stop for a person before answering (a long poll)`,
      example: 20,
    }),
  token: z.string().max(1024).optional().openapi({
    description: "A stream token (`POST .../stream-token`) in place of the API key",
  }),
});

type TaskRecord = z.infer<typeof Task>;

/** A status a long poll answers at once: the task ended, or waits for a person. */
function settled(status: TaskRecord["status"]): boolean {
  return (
    status === "completed" || status === "failed" || status === "cancelled" || status === "waiting"
  );
}

/** Reads the task until it is settled, the seconds are up, or the client goes away. */
async function waitForTask(
  deps: { tasks: { get(tenant: string, taskId: string): Promise<TaskRecord> } },
  tenant: string,
  taskId: string,
  seconds: number,
  signal: AbortSignal,
): Promise<TaskRecord> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0 || signal.aborted) break;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(WAIT_POLL_MS, left));
      signal.addEventListener("abort", done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
    });
    const task = await deps.tasks.get(tenant, taskId);
    if (settled(task.status)) return task;
  }
  return deps.tasks.get(tenant, taskId);
}

const TaskList = z.object({ tasks: z.array(Task), next_cursor: z.string().nullable() });

export function registerTaskRoutes(app: ApiApp, routes: typeof TASKS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createTask,
      summary: "Start a task",
      description:
        "Starts a task from a goal (the planner writes the plan) or a plan (validated, then run as is). " +
        "With an `Idempotency-Key` header, the same key and body within 24 hours answer the same task (200); " +
        "the same key with another body answers 409 `idempotency_key_reused`.",
      security: bearer,
      request: {
        body: {
          required: true,
          content: { "application/json": { schema: CreateTaskInput, example: createTaskExample } },
        },
        headers: z.object({ "idempotency-key": z.string().max(255).optional() }),
      },
      responses: {
        202: {
          description: "Started",
          content: { "application/json": { schema: Created, example: taskCreatedExample } },
        },
        200: json(Created, "The same task again (Idempotency-Key)"),
        ...commonErrors,
        409: json(
          ErrorBody,
          "The Idempotency-Key was used with another body (`idempotency_key_reused`)",
        ),
        ...invalidError,
      },
    }),
    async (c) => {
      const tenant = c.get("tenantId");
      const input = c.req.valid("json");
      const key = c.req.valid("header")["idempotency-key"];
      const { task, replayed, warnings } = await c
        .get("deps")
        .tasks.start(tenant, input, key ?? null);
      return c.json(
        { task_id: task.task_id, status: task.status, branch: task.branch, warnings },
        replayed ? 200 : 202,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.listTasks,
      summary: "List tasks, newest first",
      security: bearer,
      request: { query: Paging.extend({ status: Status.optional() }) },
      responses: { 200: json(TaskList, "A page of tasks"), ...commonErrors },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const page = await c.get("deps").tasks.list(c.get("tenantId"), {
        limit: q.limit,
        cursor: q.cursor ?? null,
        ...(q.status ? { status: q.status } : {}),
      });
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.getTask,
      summary: "Read a task",
      description:
        "With `wait` (1 to 60 seconds), a long poll: the answer comes as soon as the task ends (completed, " +
        "failed or cancelled) or stops to wait for a person, or when the seconds are up, whichever is first, " +
        "with the task as it is then (a client reads `status` and asks again if it still runs). A task already " +
        "ended or waiting answers at once. While it waits the request holds one of the tenant's open streams " +
        "(`max_open_streams`, 429 `too_many_streams` past it), as the events stream does.",
      security: bearerOrStreamToken,
      request: { params: TaskIdParam, query: TaskWaitQuery },
      responses: {
        200: {
          description:
            "The task (with `webhook`: its outgoing webhook deliveries, when it has a webhook_url)",
          content: { "application/json": { schema: Task, example: taskExample } },
        },
        ...commonErrors,
      },
    }),
    async (c) => {
      const tenant = c.get("tenantId");
      const { task_id } = c.req.valid("param");
      const { wait } = c.req.valid("query");
      const deps = c.get("deps");
      // Read first: another tenant's task (or none) is a 404 at once, and an ended task waits for nothing.
      const task = await deps.tasks.get(tenant, task_id);
      if (wait === undefined || settled(task.status)) return c.json(task, 200);
      const lease = await deps.streams.open(tenant);
      try {
        return c.json(await waitForTask(deps, tenant, task_id, wait, c.req.raw.signal), 200);
      } finally {
        await lease.close();
      }
    },
  );

  app.openapi(
    createRoute({
      ...routes.cancelTask,
      summary: "Cancel a task",
      description: "Every running branch stops at its next step boundary with a `cancel` commit.",
      security: bearer,
      request: { params: TaskIdParam },
      responses: { 200: json(Task, "The task"), ...commonErrors },
    }),
    async (c) => {
      const task = await c
        .get("deps")
        .tasks.cancel(c.get("tenantId"), c.req.valid("param").task_id);
      return c.json(task, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteTask,
      summary: "Delete a task with its commits, branches and artifacts",
      security: bearer,
      request: { params: TaskIdParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      await c.get("deps").tasks.delete(c.get("tenantId"), c.req.valid("param").task_id);
      return c.body(null, 204);
    },
  );
}
