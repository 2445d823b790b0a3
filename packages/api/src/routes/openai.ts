/**
 * The OpenAI-compatible face: `POST /v1/chat/completions` runs a goal as a task
 * of the namespace (or saved template) the `model` names, and answers with its
 * final answer, streamed as chunks with `stream: true`; `GET /v1/models` lists
 * the namespaces. The tenant's API key is the bearer, as OpenAI's is. Every
 * answer names its task (`x-stackvm-task-id`, `metadata.task_id`): the run is a
 * task like any other, in the task list with its commits, usage and quotas.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { StackVMError } from "@stackvm/core";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { ApiDeps } from "../deps";
import type { ApiApp, ApiEnv } from "../env";
import { openAiErrorBody } from "../openai/errors";
import { refuseUnsupported } from "../openai/fields";
import { chatRequestKey, type RetrySignals, startChatRun } from "../openai/once";
import { answerText, followRun, runError, taskInput } from "../openai/run";
import {
  ChatCompletion,
  ChatCompletionRequest,
  ChatRetryHeaders,
  ModelList,
  openAiErrors,
} from "../openai/schemas";
import { continueThread, requestedThread, THREAD_HEADER } from "../openai/thread";
import { bearer } from "../schemas";
import { streamBody, streamFailure } from "../sse-failure";
import type { OPENAI_ROUTES } from "./openai.paths";

/** The header that names the task a completion ran. */
export const TASK_ID_HEADER = "x-stackvm-task-id";
/** OpenAI's header that tells its clients whether to retry an error (`openai`, `@langchain/openai`'s client). */
const SHOULD_RETRY_HEADER = "x-should-retry";
/** A `model` that names a saved template: `template:{template_id}`. */
const TEMPLATE_MODEL = /^template:(.+)$/;

export function registerOpenAiRoutes(app: ApiApp, routes: typeof OPENAI_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createChatCompletion,
      summary: "Run a goal as OpenAI's chat completions (OpenAI-compatible)",
      description:
        "Starts a task whose goal is the last user message and whose input `conversation` holds the messages " +
        "before it (or, with an `x-stackvm-thread` header or `metadata.thread_id`, the next turn of that thread, " +
        "continuing its latest turn's answer and variables; every answer names its thread in `x-stackvm-thread`), in the namespace `model` names (or with the plan of the saved template " +
        "`template:{template_id}`), and answers its final answer as a `chat.completion`. With `stream: true` the " +
        "answer is Server-Sent Events of `chat.completion.chunk`s: the final answer's text as the step that writes " +
        "it is written, then `data: [DONE]` (with `stream_options.include_usage`, a last chunk carries the task's " +
        "usage). The task's id is in the `x-stackvm-task-id` header and in `metadata.task_id`: inspect, fork or retry " +
        "the run like any task. Errors answer in OpenAI's shape (`{error: {message, type, param, code}}`); a run " +
        "that fails or is cancelled answers 400 with code `task_failed` or `task_cancelled` and `x-should-retry: false` " +
        "(in a stream: a last event `{error}`), so that no SDK retries it. A request sent again answers the run it " +
        "started: with the same `Idempotency-Key` and body within 24 hours; without one, the same body within 15 minutes " +
        "while its run has not ended, or whatever its end when `x-stainless-retry-count` (the `openai` client's retry " +
        "number) is above 0.",
      security: bearer,
      request: {
        headers: ChatRetryHeaders,
        body: {
          required: true,
          content: { "application/json": { schema: ChatCompletionRequest } },
        },
      },
      responses: {
        200: {
          description: "The final answer (or, with `stream: true`, a stream of chunks)",
          headers: z.object({ [TASK_ID_HEADER]: z.string(), [THREAD_HEADER]: z.string() }),
          content: {
            "application/json": { schema: ChatCompletion },
            "text/event-stream": { schema: z.string() },
          },
        },
        409: {
          description:
            "The run waits for a person's answer (`task_waiting`), or the Idempotency-Key was used with another body (`idempotency_key_reused`)",
          content: {
            "application/json": { schema: openAiErrors[400].content["application/json"].schema },
          },
        },
        ...openAiErrors,
      },
    }),
    async (c) => {
      const tenant = c.get("tenantId");
      const request = c.req.valid("json");
      const deps = c.get("deps");
      refuseUnsupported(request);
      const input = taskInput(request, await target(c, tenant, request.model));
      // The run is followed to its end: a slot of the tenant's open streams, taken
      // before the task starts, so that a refusal (429) starts nothing.
      const lease = await deps.streams.open(tenant);
      let started: Awaited<ReturnType<typeof startOrContinue>>;
      try {
        const headers = c.req.valid("header");
        started = await startOrContinue(deps, tenant, c.req.header(THREAD_HEADER), request, input, {
          idempotencyKey: headers["idempotency-key"],
          retryCount: headers["x-stainless-retry-count"],
        });
      } catch (error) {
        await lease.close();
        throw error;
      }
      const { task } = started;
      c.header(TASK_ID_HEADER, task.task_id);
      c.header(THREAD_HEADER, task.thread?.thread_id ?? task.task_id);
      const created = Math.floor(Date.now() / 1000);
      const id = `chatcmpl-${task.task_id}`;
      const metadata = (status: string) => ({ task_id: task.task_id, status });

      if (!request.stream) {
        let ended: Awaited<ReturnType<typeof deps.tasks.get>> | undefined;
        try {
          for await (const event of followRun(deps, tenant, task, {
            signal: c.req.raw.signal,
            live: false,
          })) {
            if (event.kind === "end") ended = event.task;
          }
        } finally {
          await lease.close();
        }
        const final = ended ?? (await deps.tasks.get(tenant, task.task_id));
        // A client that gave up before the end (a timeout) sends the request again:
        // only an answer that reaches a connected client makes a repeat a new question.
        if (ended && !c.req.raw.signal.aborted) await started.answer();
        const failed = runError(final);
        if (failed) {
          // Sent again, the request would answer this same run: no SDK need retry it.
          c.header(SHOULD_RETRY_HEADER, "false");
          return c.json(openAiErrorBody(failed.status, failed.code, failed.message), failed.status);
        }
        return c.json(
          {
            id,
            object: "chat.completion" as const,
            created,
            model: request.model,
            choices: [
              {
                index: 0,
                message: { role: "assistant" as const, content: answerText(final), refusal: null },
                finish_reason: "stop" as const,
                logprobs: null,
              },
            ],
            usage: usageOf(final.usage),
            metadata: metadata(final.status),
          },
          200,
        );
      }

      return streamSSE(c, (stream) =>
        streamBody(
          async () => {
            const abort = new AbortController();
            stream.onAbort(() => abort.abort());
            const chunk = (delta: Record<string, unknown>, finish: "stop" | null = null) => ({
              id,
              object: "chat.completion.chunk",
              created,
              model: request.model,
              choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
            });
            const send = (data: unknown) => stream.writeSSE({ data: JSON.stringify(data) });
            await send({
              ...chunk({ role: "assistant", content: "" }),
              metadata: metadata(task.status),
            });
            for await (const event of followRun(deps, tenant, task, {
              signal: abort.signal,
              live: true,
            })) {
              if (event.kind === "text") {
                await send(chunk({ content: event.text }));
                continue;
              }
              const failed = runError(event.task);
              if (failed) {
                // OpenAI's clients raise an `error` in a stream's data as an API error.
                await send(openAiErrorBody(failed.status, failed.code, failed.message));
                return;
              }
              await send({ ...chunk({}, "stop"), metadata: metadata(event.task.status) });
              if (request.stream_options?.include_usage) {
                await send({ ...chunk({}), choices: [], usage: usageOf(event.task.usage) });
              }
              await stream.write("data: [DONE]\n\n");
              if (!abort.signal.aborted) await started.answer();
            }
          },
          (error) => {
            const failure = streamFailure(error, deps.log, {
              request_id: c.get("requestId"),
              task_id: task.task_id,
            });
            const status = failure.code === "not_found" ? 404 : 500;
            // OpenAI's clients raise an `error` in a stream's data as an API error.
            return stream.writeSSE({
              data: JSON.stringify(openAiErrorBody(status, failure.code, failure.message)),
            });
          },
        ).finally(() => lease.close()),
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.listModels,
      summary: "List the namespaces as models (OpenAI-compatible)",
      description:
        "The tenant's namespaces in OpenAI's model list shape: each `id` is a `model` that " +
        "POST /v1/chat/completions runs goals in.",
      security: bearer,
      responses: {
        200: {
          description: "The namespaces",
          content: { "application/json": { schema: ModelList } },
        },
        401: openAiErrors[401],
        429: openAiErrors[429],
        500: openAiErrors[500],
      },
    }),
    async (c) => {
      const namespaces = await c.get("deps").namespaces.list(c.get("tenantId"));
      return c.json(
        {
          object: "list" as const,
          data: namespaces.map((ns) => ({
            id: ns.name,
            object: "model" as const,
            created: ns.created_at ? Math.floor(Date.parse(ns.created_at) / 1000) : 0,
            owned_by: "stackvm",
          })),
        },
        200,
      );
    },
  );
}

/** The namespace (and, for a template, the plan) a `model` names; 404 in OpenAI's words otherwise. */
async function target(
  c: Context<ApiEnv>,
  tenant: string,
  model: string,
): Promise<{ namespace: string; plan?: unknown[] }> {
  const deps = c.get("deps");
  const template = TEMPLATE_MODEL.exec(model)?.[1];
  try {
    if (template !== undefined) {
      const saved = await deps.templates.get(tenant, template);
      return { namespace: saved.namespace, plan: saved.plan };
    }
    await deps.namespaces.get(tenant, model);
    return { namespace: model };
  } catch (error) {
    if ((error as { kind?: unknown }).kind !== "not_found") throw error;
    throw new StackVMError(
      "not_found",
      "model_not_found",
      `the model '${model.slice(0, 200)}' is neither a namespace of this tenant nor template:{template_id} of a saved template: GET /v1/models lists the namespaces`,
    );
  }
}

function usageOf(usage: { input_tokens: number; output_tokens: number }) {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/** A cold start, or the next turn of the thread the request names (`openai/thread.ts`). */
async function startOrContinue(
  deps: ApiDeps,
  tenant: string,
  header: string | undefined,
  request: ChatCompletionRequest,
  input: Parameters<typeof continueThread>[3],
  signals: RetrySignals,
) {
  const thread = requestedThread(header, request);
  if (thread === null) return startChatRun(deps.tasks, tenant, request, input, signals);
  return continueThread(deps, tenant, thread, input, chatRequestKey(thread, request, signals));
}
