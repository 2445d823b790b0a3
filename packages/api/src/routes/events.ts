/**
 * `GET /v1/tasks/{task_id}/events`: Server-Sent Events as commits land. The
 * function stays stateless: `TaskEvents` polls the store, and a connection lives
 * a bounded time, after which the client reconnects with `Last-Event-ID` (on AWS
 * the API runs behind a streaming function URL). `POST .../stream-token` gives
 * a page what its `EventSource` opens the stream with instead of a key.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  decodeEventId,
  STREAM_TOKEN_DEFAULT_SECONDS,
  STREAM_TOKEN_MAX_SECONDS,
  STREAM_TOKEN_MIN_SECONDS,
} from "@stackvm/core";
import { streamSSE } from "hono/streaming";
import type { ApiApp } from "../env";
import {
  bearer,
  bearerOrStreamToken,
  commonErrors,
  forbiddenError,
  json,
  TaskIdParam,
} from "../schemas";
import { streamBody, streamFailure } from "../sse-failure";
import type { EVENTS_ROUTES } from "./events.paths";

/** How long a client waits before reconnecting after the stream closes. */
const RETRY_MS = 1_000;

const StreamTokenInput = z
  .object({
    ttl_seconds: z
      .number()
      .int()
      .min(STREAM_TOKEN_MIN_SECONDS)
      .max(STREAM_TOKEN_MAX_SECONDS)
      .optional()
      .openapi({
        description: `How long the token lives (default ${STREAM_TOKEN_DEFAULT_SECONDS} s)`,
      }),
  })
  .strict()
  .openapi("StreamTokenInput");

const StreamToken = z
  .object({
    token: z.string(),
    task_id: z.string(),
    expires_at: z.string(),
    events_url: z.string().openapi({ description: "The task's events stream, with the token" }),
  })
  .openapi("StreamToken");

export function registerEventRoutes(app: ApiApp, routes: typeof EVENTS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createStreamToken,
      summary: "Make a short-lived token that reads this task (for a browser's EventSource)",
      description:
        "A token for a web page: passed as `?token=` instead of an API key, it opens `GET /v1/tasks/{task_id}/events` " +
        "and the task's other reads (`GET /v1/tasks/{task_id}` and what is under it) of this task only, until it expires " +
        `(\`ttl_seconds\`, ${STREAM_TOKEN_MIN_SECONDS} to ${STREAM_TOKEN_MAX_SECONDS}, default ${STREAM_TOKEN_DEFAULT_SECONDS}). ` +
        "Any other use answers 403 `stream_token_scope`; an expired, altered or foreign token 401. Ask for it from your " +
        "server with the API key and hand only the token to the page. Nothing is stored: a token cannot be revoked " +
        "before it expires except by rotating the tenant's signing secret.",
      security: bearer,
      request: {
        params: TaskIdParam,
        body: {
          content: { "application/json": { schema: StreamTokenInput } },
          required: false,
        },
      },
      responses: {
        201: json(StreamToken, "The token, and the events URL that carries it"),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { task_id } = c.req.valid("param");
      const tenant = c.get("tenantId");
      const { events, streamTokens, config } = c.get("deps");
      const input = (c.req.valid("json") as z.infer<typeof StreamTokenInput> | undefined) ?? {};
      // 404 for an unknown task (another tenant's too), before anything is signed.
      await events.check(tenant, task_id);
      const { token, expires_at } = await streamTokens.issue(tenant, task_id, input.ttl_seconds);
      const base = config.publicUrl ?? new URL(c.req.url).origin;
      const events_url = `${base}/v1/tasks/${encodeURIComponent(task_id)}/events?token=${token}`;
      return c.json({ token, task_id, expires_at, events_url }, 201);
    },
  );

  app.openapi(
    createRoute({
      ...routes.streamTaskEvents,
      summary: "Stream a task's commits and status changes (Server-Sent Events)",
      description:
        "`event: commit` (data: Commit, with an `id`) for every commit of every branch in order, " +
        "`event: status` (data: Task) when the task's status changes (or, while it waits for a running slot, " +
        "its place in line: `waiting_for_slot`), `event: retrying` (data: `{branch, attempt, max_attempts, error, " +
        "next_attempt_at, since}`) once for each failed attempt of a step that will be tried again, `event: group` (data: " +
        "`{branch, base, members, done, started_at}`) when a parallel group starts and each time one of its members' " +
        "results is held (the members run at once; their commits follow in plan order), `event: token` (data: `{branch, " +
        "seq_no, parent_id, purpose, final_answer, text}`) with each piece of text an `llm_generate` step or the " +
        "planner is writing, before its commit (kept a short while only: a reconnect may miss the text of a step in flight, " +
        "never gets text it received again), and `event: end` after the task " +
        "and all its branches reached a terminal status, after which the stream closes; a reconnect with the end's id " +
        "answers 204 (an `EventSource` stops) unless the task went on since (a fork, a retry); `event: error` (data: " +
        "`{code, message}`: `not_found` when the task was deleted meanwhile, `internal` otherwise) when it cannot go on. A stream that " +
        "closes without `end` has reached its time limit: reconnect with `Last-Event-ID` (or the " +
        "`last_event_id` query parameter) to resume after the last event received (every event but `status`, " +
        "`retrying`, `group`, `llm_call` and `error` has an id).",
      security: bearerOrStreamToken,
      request: {
        params: TaskIdParam,
        query: z.object({
          last_event_id: z.string().max(8000).optional(),
          token: z.string().max(1024).optional().openapi({
            description: "A stream token (`POST .../stream-token`) in place of the API key",
          }),
        }),
        headers: z.object({ "last-event-id": z.string().max(8000).optional() }),
      },
      responses: {
        200: {
          description: "An event stream",
          content: { "text/event-stream": { schema: z.string() } },
        },
        204: {
          description:
            "The stream already sent `event: end` (its id came back) and nothing came since",
        },
        ...commonErrors,
        ...forbiddenError,
      },
    }),
    async (c) => {
      const { task_id } = c.req.valid("param");
      const tenant = c.get("tenantId");
      const { events, log, streams } = c.get("deps");
      const lastEventId =
        c.req.valid("header")["last-event-id"] ?? c.req.valid("query").last_event_id ?? null;
      // Bad ids and unknown tasks answer as JSON errors, before the stream starts.
      decodeEventId(lastEventId);
      await events.check(tenant, task_id);
      // After `event: end`, EventSource reconnects with its id: 204 tells it to stop.
      if (await events.finished(tenant, task_id, lastEventId)) return c.body(null, 204);
      // The tenant's slot for a long request: 429 too_many_streams, as JSON, past the limit.
      const lease = await streams.open(tenant);
      const context = { request_id: c.get("requestId"), task_id };
      return streamSSE(c, (stream) =>
        streamBody(
          async () => {
            const abort = new AbortController();
            stream.onAbort(() => abort.abort());
            let first = true;
            for await (const event of events.stream(tenant, task_id, {
              lastEventId,
              signal: abort.signal,
            })) {
              if (abort.signal.aborted) break;
              if (event.event === "heartbeat") {
                await stream.write(": keep-alive\n\n");
                continue;
              }
              await stream.writeSSE({
                event: event.event,
                data: JSON.stringify(event.data),
                ...("id" in event ? { id: event.id } : {}),
                ...(first ? { retry: RETRY_MS } : {}),
              });
              first = false;
            }
          },
          (error) =>
            stream.writeSSE({
              event: "error",
              data: JSON.stringify(streamFailure(error, log, context)),
            }),
        ).finally(() => lease.close()),
      );
    },
  );
}
