/**
 * The OpenAI-compatible face's wire shapes (`POST /v1/chat/completions`,
 * `GET /v1/models`), as OpenAI's API reference gives them, so that the clients
 * and SDKs integrators already hold can call a plan. `response_format` shapes
 * the final answer; fields a run cannot honour (`tools`, ...) are refused
 * (fields.ts); the sampling fields (`temperature`, ...) are ignored: the plan decides.
 */
import { z } from "@hono/zod-openapi";

export const ChatMessage = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant", "tool"]),
    content: z
      .union([
        z.string(),
        z.array(z.object({ type: z.string(), text: z.string().optional() }).passthrough()),
        z.null(),
      ])
      .openapi({ description: "Text, or content parts (their `text` parts are read)" }),
    name: z.string().optional(),
  })
  .passthrough()
  .openapi("ChatMessage");
export type ChatMessage = z.infer<typeof ChatMessage>;

/** OpenAI's `response_format`: the final answer as text, a JSON object, or JSON of a schema. */
export const ChatResponseFormat = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({
      type: z.literal("json_schema"),
      json_schema: z
        .object({
          name: z.string().min(1).max(64),
          description: z.string().max(10_000).optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullable().optional(),
        })
        .passthrough(),
    }),
  ])
  .openapi("ChatResponseFormat", {
    description:
      "`json_object`: the final answer is a JSON object; `json_schema`: JSON that validates against `json_schema.schema` " +
      "(strict or not, the answer is checked). The plan is asked for such an answer, the step that sets `final_answer` " +
      "checks it (a plan update repairs one that does not validate), and the message's content is that JSON",
  });

export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).max(200).openapi({
      description:
        "A namespace (`default`, or one from GET /v1/models), or `template:{template_id}` to run a saved template's plan",
      example: "default",
    }),
    messages: z.array(ChatMessage).min(1).max(200).openapi({
      description:
        "The last user message is the task's goal; the messages before it are its context (the task's input `conversation`)",
    }),
    stream: z.boolean().optional().openapi({
      description:
        "Stream the final answer's text as `chat.completion.chunk` events as it is written",
    }),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().optional(),
    metadata: z.record(z.string(), z.string()).optional().openapi({
      description: "Kept in the task's metadata",
    }),
    response_format: ChatResponseFormat.optional(),
  })
  .passthrough()
  .openapi("ChatCompletionRequest");
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** The headers by which a request says it was sent before (see `once.ts`). */
export const ChatRetryHeaders = z.object({
  "idempotency-key": z.string().min(1).max(255).optional().openapi({
    description: "The same key and body within 24 hours answer the same run",
  }),
  "x-stainless-retry-count": z.string().max(20).optional().openapi({
    description:
      "The `openai` client's attempt number: above 0, the same body within 15 minutes answers the run the first attempt started",
  }),
});

const ChatUsage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

/** Where the run is: every answer names its task, to inspect, fork or retry it like any other. */
const RunMetadata = z
  .object({ task_id: z.string(), status: z.string() })
  .openapi({ description: "The task that ran the goal (also in the `x-stackvm-task-id` header)" });

export const ChatCompletion = z
  .object({
    id: z.string().openapi({ example: "chatcmpl-k3j9x0aa0000" }),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal("assistant"),
          content: z.string(),
          refusal: z.null(),
        }),
        finish_reason: z.literal("stop"),
        logprobs: z.null(),
      }),
    ),
    usage: ChatUsage,
    metadata: RunMetadata,
  })
  .openapi("ChatCompletion");

export const ModelList = z
  .object({
    object: z.literal("list"),
    data: z.array(
      z.object({
        id: z.string(),
        object: z.literal("model"),
        created: z.number().int(),
        owned_by: z.string(),
      }),
    ),
  })
  .openapi("ModelList");

/** OpenAI's error body: what its clients read into their error classes. */
export const OpenAiError = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      param: z.string().nullable(),
      code: z.string().nullable(),
    }),
  })
  .openapi("OpenAiError");

const openAiError = (description: string) => ({
  description,
  content: { "application/json": { schema: OpenAiError } },
});

/** The error answers of the OpenAI-compatible routes, in OpenAI's shape. */
export const openAiErrors = {
  400: openAiError(
    "Malformed request, or the run failed or was cancelled (`task_failed`, `task_cancelled`: `x-should-retry: false`, the header names the task)",
  ),
  401: openAiError("No or bad API key"),
  404: openAiError("No such model (namespace or template)"),
  422: openAiError("The goal cannot run (e.g. too long)"),
  429: openAiError("Rate limited or over quota; see Retry-After"),
  500: openAiError("An error of the service (sent again, the request answers the same run)"),
} as const;
