/**
 * The HTTPS API (Hono), which also serves the web console at `/ui`.
 *
 * Behind a Lambda function URL with response streaming, not API Gateway v2:
 * - `GET /v1/tasks/{id}/events` is Server-Sent Events. An HTTP API buffers the
 *   whole response and cuts it at 30 seconds, so commits would reach the client
 *   in bursts at best; a streaming function URL sends each event as it is
 *   written, for as long as the function's timeout (clients resume with
 *   `Last-Event-ID` after that, as SSE intends).
 * - Everything API Gateway would add is already in the app: API keys, tenant
 *   isolation, rate limits, CORS, the OpenAPI document. A function URL costs
 *   nothing per request beyond the invocation (an HTTP API adds $1 per million),
 *   and answers up to 20 MB streamed instead of 6 MB buffered.
 *
 * The entry file must therefore export `streamHandle(app)` from
 * `hono/aws-lambda` (it serves ordinary responses too); `handle(app)` answers
 * a streaming URL with nothing.
 *
 * The function URL has no IAM auth (the app checks API keys and webhook
 * signatures) and no CORS of its own: the app decides CORS, and two layers
 * would send its headers twice.
 */
import { apiInstalls } from "./api-installs";
import { observabilityEnvironment } from "./observability";
import { queue } from "./queue";
import { scheduleEnvironment, scheduleManagementPermissions } from "./schedules";
import { adminKey, embeddingsConfiguredEnvironment, llmConfiguredEnvironment } from "./secrets";
import { bucket, llmTraceEnvironment, table } from "./storage";
import { toolSecretsEnvironment, toolSecretsSealPermissions } from "./tool-secrets";

/** How long one request, and so one events stream, may last. */
export const apiTimeoutSeconds = 300;

/** The API function and its public URL. */
export const api = new sst.aws.Function("Api", {
  handler: "packages/functions/src/api.handler",
  url: { authorization: "none", cors: false },
  streaming: true,
  timeout: `${apiTimeoutSeconds} seconds`,
  memory: "1024 MB",
  link: [table, bucket, queue, adminKey],
  permissions: [...scheduleManagementPermissions, ...toolSecretsSealPermissions],
  // /docs serves Swagger UI's files from this package, read from disk: ship it beside the bundle.
  nodejs: { install: apiInstalls },
  environment: {
    STACKVM_TABLE: table.name,
    STACKVM_BUCKET: bucket.name,
    STACKVM_QUEUE_URL: queue.url,
    STACKVM_ADMIN_KEY: adminKey.value,
    // The origins whose pages may call the API (checked by the function's config at start).
    ...(process.env.STACKVM_CORS_ORIGINS
      ? { STACKVM_CORS_ORIGINS: process.env.STACKVM_CORS_ORIGINS }
      : {}),
    ...llmTraceEnvironment,
    ...observabilityEnvironment,
    ...llmConfiguredEnvironment,
    ...embeddingsConfiguredEnvironment,
    ...scheduleEnvironment,
    ...toolSecretsEnvironment,
  },
});
