/**
 * What makes `/openapi.json` a contract a generator can use, added to every route
 * in one place when the document is built (as `openapi-tags.ts` tags them): a
 * stable `operationId` per operation (the method names of a generated client),
 * `security: []` on the routes that take no API key, the 413 that the body limit
 * gives any route with a body, and the outgoing webhook as a `webhooks` entry.
 * A route missing from {@link OPERATION_IDS} gets no id, and a test of the
 * document fails on it.
 */
import { z } from "@hono/zod-openapi";
import { Task } from "@stackvm/core/api-records";
import type { ApiApp } from "./env";
import { errorAnswer } from "./openapi-answers";

/** `method path` to the operation's id: the name a generated client gives its method. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  "post /v1/tasks": "createTask",
  "get /v1/tasks": "listTasks",
  "get /v1/tasks/{task_id}": "getTask",
  "delete /v1/tasks/{task_id}": "deleteTask",
  "post /v1/tasks/{task_id}/cancel": "cancelTask",
  "post /v1/tasks/{task_id}/retry": "retryTask",
  "put /v1/tasks/{task_id}/keep": "keepTask",
  "delete /v1/tasks/{task_id}/keep": "unkeepTask",
  "post /v1/tasks/{task_id}/continue": "continueTask",
  "get /v1/threads": "listThreads",
  "get /v1/threads/{thread_id}": "getThread",
  "get /v1/tasks/{task_id}/events": "streamTaskEvents",
  "post /v1/tasks/{task_id}/stream-token": "createStreamToken",
  "get /v1/tasks/{task_id}/blobs/{sha256}": "getTaskBlob",
  "get /v1/tasks/{task_id}/branches": "listBranches",
  "post /v1/tasks/{task_id}/branches": "forkBranch",
  "get /v1/tasks/{task_id}/branches/{name}": "getBranch",
  "delete /v1/tasks/{task_id}/branches/{name}": "deleteBranch",
  "get /v1/tasks/{task_id}/branches/{name}/commits": "listCommits",
  "post /v1/tasks/{task_id}/branches/{name}/promote": "promoteBranch",
  "post /v1/tasks/{task_id}/branches/{name}/input": "answerWait",
  "get /v1/tasks/{task_id}/commits/{commit_id}": "getCommit",
  "get /v1/tasks/{task_id}/commits/{commit_id}/state": "getCommitState",
  "get /v1/tasks/{task_id}/commits/{commit_id}/diff": "getCommitDiff",
  "get /v1/tasks/{task_id}/commits/{commit_id}/llm-calls/{n}": "getLlmCall",
  "post /v1/tasks/{task_id}/commits/{commit_id}/save-plan": "savePlanAsTemplate",
  "post /v1/resume/{token}": "answerWaitByToken",
  "get /v1/tools": "listTools",
  "get /v1/namespaces": "listNamespaces",
  "put /v1/namespaces/{name}": "putNamespace",
  "get /v1/namespaces/{name}": "getNamespace",
  "delete /v1/namespaces/{name}": "deleteNamespace",
  "post /v1/namespaces/{name}/tools": "addCodeTool",
  "delete /v1/namespaces/{name}/tools/{tool}": "deleteCodeTool",
  "post /v1/namespaces/{name}/mcp-servers": "addMcpServer",
  "get /v1/namespaces/{name}/mcp-servers": "listMcpServers",
  "post /v1/namespaces/{name}/mcp-servers/{server}/refresh": "refreshMcpServer",
  "delete /v1/namespaces/{name}/mcp-servers/{server}": "deleteMcpServer",
  "post /v1/namespaces/{name}/http-tools": "addHttpTool",
  "delete /v1/namespaces/{name}/http-tools/{tool}": "deleteHttpTool",
  "post /v1/plans/validate": "validatePlan",
  "get /v1/templates": "listTemplates",
  "get /v1/templates/{template_id}": "getTemplate",
  "delete /v1/templates/{template_id}": "deleteTemplate",
  "post /v1/keys": "createKey",
  "get /v1/keys": "listKeys",
  "delete /v1/keys/{key_id}": "deleteKey",
  "post /v1/admin/tenants/{tenant}/keys": "createTenantKey",
  "get /v1/admin/tenants/{tenant}/quotas": "getTenantQuotas",
  "put /v1/admin/tenants/{tenant}/quotas": "putTenantQuotas",
  "post /v1/triggers": "createTrigger",
  "get /v1/triggers": "listTriggers",
  "get /v1/triggers/{trigger_id}": "getTrigger",
  "delete /v1/triggers/{trigger_id}": "deleteTrigger",
  "post /v1/hooks/{trigger_id}": "deliverTrigger",
  "post /v1/schedules": "createSchedule",
  "get /v1/schedules": "listSchedules",
  "get /v1/schedules/{schedule_id}": "getSchedule",
  "patch /v1/schedules/{schedule_id}": "updateSchedule",
  "delete /v1/schedules/{schedule_id}": "deleteSchedule",
  "get /v1/webhook-secret": "getWebhookSecret",
  "post /v1/knowledge-bases": "createKnowledgeBase",
  "get /v1/knowledge-bases": "listKnowledgeBases",
  "get /v1/knowledge-bases/{kb}": "getKnowledgeBase",
  "delete /v1/knowledge-bases/{kb}": "deleteKnowledgeBase",
  "post /v1/knowledge-bases/{kb}/documents": "uploadDocument",
  "get /v1/knowledge-bases/{kb}/documents": "listDocuments",
  "get /v1/knowledge-bases/{kb}/documents/{document_id}": "getDocument",
  "delete /v1/knowledge-bases/{kb}/documents/{document_id}": "deleteDocument",
  "get /v1/usage": "getUsage",
  "post /v1/files": "uploadFile",
  "get /v1/files": "listFiles",
  "get /v1/files/{file_id}": "getFile",
  "get /v1/files/{file_id}/content": "getFileContent",
  "delete /v1/files/{file_id}": "deleteFile",
  "get /v1/doctor": "runDoctor",
  "get /healthz": "getHealth",
  "get /openapi.json": "getOpenApiDocument",
  "get /docs": "getDocsPage",
  "get /ui": "getConsole",
};

/** The license the document names (the project's LICENSE file). */
export const LICENSE = { name: "MIT", identifier: "MIT" } as const;

const tooLarge = (path: string, maxBytes: number) =>
  errorAnswer(
    path,
    `The request body is over the limit (\`too_large\`; ${maxBytes} bytes for JSON)`,
  );

/** Applies ids, public security and the body limit's 413 to every route of the registry. */
export function completeContract(app: ApiApp, maxBodyBytes: number): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const route = definition.route;
    const id = OPERATION_IDS[`${route.method} ${route.path}`];
    if (id) route.operationId = id;
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
