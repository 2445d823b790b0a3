/**
 * The API's routes by the file that registers them, each group's methods and
 * paths written out, so that the app can route every request from the start and
 * load a group's code, and build its schemas, on the group's first request
 * (`lazy-routes.ts`). A test registers each group and checks that it registers
 * exactly these routes, in this order (`route-groups.test.ts`).
 */
import type { ApiApp } from "./env";

export interface RouteGroup {
  /** The file under `routes/`, for messages. */
  name: string;
  /** `METHOD /path`, with Hono's `:param`, in the order the group registers them. */
  routes: readonly string[];
  /** Its register function, loaded on first use (each is a chunk of its own in a bundle). */
  load: () => Promise<(app: ApiApp) => void>;
}

/** In the order the app registers them: a request that two routes match goes to the first. */
export const ROUTE_GROUPS: readonly RouteGroup[] = [
  {
    name: "tasks",
    routes: [
      "POST /v1/tasks",
      "GET /v1/tasks",
      "GET /v1/tasks/:task_id",
      "POST /v1/tasks/:task_id/cancel",
      "DELETE /v1/tasks/:task_id",
    ],
    load: async () => (await import("./routes/tasks")).registerTaskRoutes,
  },
  {
    name: "branches",
    routes: [
      "GET /v1/tasks/:task_id/branches",
      "GET /v1/tasks/:task_id/branches/:name",
      "GET /v1/tasks/:task_id/branches/:name/commits",
      "POST /v1/tasks/:task_id/branches",
      "POST /v1/tasks/:task_id/branches/:name/promote",
      "DELETE /v1/tasks/:task_id/branches/:name",
      "GET /v1/tasks/:task_id/commits/:commit_id",
      "GET /v1/tasks/:task_id/commits/:commit_id/state",
      "GET /v1/tasks/:task_id/commits/:commit_id/diff",
    ],
    load: async () => (await import("./routes/branches")).registerBranchRoutes,
  },
  {
    name: "retry",
    routes: ["POST /v1/tasks/:task_id/retry"],
    load: async () => (await import("./routes/retry")).registerRetryRoutes,
  },
  {
    name: "threads",
    routes: ["POST /v1/tasks/:task_id/continue", "GET /v1/threads", "GET /v1/threads/:thread_id"],
    load: async () => (await import("./routes/threads")).registerThreadRoutes,
  },
  {
    name: "blobs",
    routes: ["GET /v1/tasks/:task_id/blobs/:sha256"],
    load: async () => (await import("./routes/blobs")).registerBlobRoutes,
  },
  {
    name: "llm-calls",
    routes: ["GET /v1/tasks/:task_id/commits/:commit_id/llm-calls/:n"],
    load: async () => (await import("./routes/llm-calls")).registerLlmCallRoutes,
  },
  {
    name: "namespaces",
    routes: [
      "GET /v1/tools",
      "GET /v1/namespaces",
      "PUT /v1/namespaces/:name",
      "GET /v1/namespaces/:name",
      "DELETE /v1/namespaces/:name",
      "POST /v1/namespaces/:name/tools",
      "DELETE /v1/namespaces/:name/tools/:tool",
    ],
    load: async () => (await import("./routes/namespaces")).registerNamespaceRoutes,
  },
  {
    name: "tool-sources",
    routes: [
      "POST /v1/namespaces/:name/mcp-servers",
      "GET /v1/namespaces/:name/mcp-servers",
      "POST /v1/namespaces/:name/mcp-servers/:server/refresh",
      "DELETE /v1/namespaces/:name/mcp-servers/:server",
      "POST /v1/namespaces/:name/http-tools",
      "DELETE /v1/namespaces/:name/http-tools/:tool",
    ],
    load: async () => (await import("./routes/tool-sources")).registerToolSourceRoutes,
  },
  {
    name: "plans",
    routes: ["POST /v1/plans/validate"],
    load: async () => (await import("./routes/plans")).registerPlanRoutes,
  },
  {
    name: "keys",
    routes: [
      "POST /v1/keys",
      "GET /v1/keys",
      "DELETE /v1/keys/:key_id",
      "POST /v1/admin/tenants/:tenant/keys",
    ],
    load: async () => (await import("./routes/keys")).registerKeyRoutes,
  },
  {
    name: "triggers",
    routes: [
      "POST /v1/triggers",
      "GET /v1/triggers",
      "GET /v1/triggers/:trigger_id",
      "DELETE /v1/triggers/:trigger_id",
      "POST /v1/hooks/:trigger_id",
    ],
    load: async () => (await import("./routes/triggers")).registerTriggerRoutes,
  },
  {
    name: "schedules",
    routes: [
      "POST /v1/schedules",
      "GET /v1/schedules",
      "GET /v1/schedules/:schedule_id",
      "PATCH /v1/schedules/:schedule_id",
      "DELETE /v1/schedules/:schedule_id",
    ],
    load: async () => (await import("./routes/schedules")).registerScheduleRoutes,
  },
  {
    name: "webhooks",
    routes: [
      "GET /v1/webhook-secret",
      "GET /v1/admin/tenants/:tenant/quotas",
      "PUT /v1/admin/tenants/:tenant/quotas",
    ],
    load: async () => (await import("./routes/webhooks")).registerWebhookRoutes,
  },
  {
    name: "retention",
    routes: ["PUT /v1/tasks/:task_id/keep", "DELETE /v1/tasks/:task_id/keep"],
    load: async () => (await import("./routes/retention")).registerRetentionRoutes,
  },
  {
    name: "usage",
    routes: ["GET /v1/usage"],
    load: async () => (await import("./routes/usage")).registerUsageRoutes,
  },
  {
    name: "waits",
    routes: ["POST /v1/tasks/:task_id/branches/:name/input", "POST /v1/resume/:token"],
    load: async () => (await import("./routes/waits")).registerWaitRoutes,
  },
  {
    name: "templates",
    routes: [
      "POST /v1/tasks/:task_id/commits/:commit_id/save-plan",
      "GET /v1/templates",
      "GET /v1/templates/:template_id",
      "DELETE /v1/templates/:template_id",
    ],
    load: async () => (await import("./routes/templates")).registerTemplateRoutes,
  },
  {
    name: "events",
    routes: ["POST /v1/tasks/:task_id/stream-token", "GET /v1/tasks/:task_id/events"],
    load: async () => (await import("./routes/events")).registerEventRoutes,
  },
  {
    name: "knowledge",
    routes: [
      "POST /v1/knowledge-bases",
      "GET /v1/knowledge-bases",
      "GET /v1/knowledge-bases/:kb",
      "DELETE /v1/knowledge-bases/:kb",
      "POST /v1/knowledge-bases/:kb/documents",
      "GET /v1/knowledge-bases/:kb/documents",
      "GET /v1/knowledge-bases/:kb/documents/:document_id",
      "DELETE /v1/knowledge-bases/:kb/documents/:document_id",
    ],
    load: async () => (await import("./routes/knowledge")).registerKnowledgeRoutes,
  },
  {
    name: "files",
    routes: [
      "POST /v1/files",
      "GET /v1/files",
      "GET /v1/files/:file_id",
      "GET /v1/files/:file_id/content",
      "DELETE /v1/files/:file_id",
    ],
    load: async () => (await import("./routes/files")).registerFileRoutes,
  },
  {
    name: "doctor",
    routes: ["GET /v1/doctor"],
    load: async () => (await import("./routes/doctor")).registerDoctorRoutes,
  },
  {
    name: "openai",
    routes: ["POST /v1/chat/completions", "GET /v1/models"],
    load: async () => (await import("./routes/openai")).registerOpenAiRoutes,
  },
  {
    name: "mcp",
    routes: ["POST /mcp"],
    load: async () => (await import("./routes/mcp")).registerMcpRoutes,
  },
];
