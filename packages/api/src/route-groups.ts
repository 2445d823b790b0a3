/**
 * The API's route files in the order the app registers them, each with its
 * declared routes (`routes/*.paths.ts`, see `route-declaration.ts`) and its
 * register function loaded on first use, so that the app can route every
 * request from the start and load a file's code, and build its schemas, on the
 * first request to one of its routes (`lazy-routes.ts`). No path is written
 * here: each file's declaration names them.
 */
import type { ApiApp } from "./env";
import {
  DECLARED_IN,
  honoRoutes,
  type RouteDeclaration,
  type RouteLine,
} from "./route-declaration";
import { BLOBS_ROUTES } from "./routes/blobs.paths";
import { BRANCHES_ROUTES } from "./routes/branches.paths";
import { DOCTOR_ROUTES } from "./routes/doctor.paths";
import { EVENTS_ROUTES } from "./routes/events.paths";
import { FILES_ROUTES } from "./routes/files.paths";
import { KEYS_ROUTES } from "./routes/keys.paths";
import { KNOWLEDGE_ROUTES } from "./routes/knowledge.paths";
import { LLM_CALLS_ROUTES } from "./routes/llm-calls.paths";
import { MCP_ROUTES } from "./routes/mcp.paths";
import { NAMESPACES_ROUTES } from "./routes/namespaces.paths";
import { OPENAI_ROUTES } from "./routes/openai.paths";
import { PLANS_ROUTES } from "./routes/plans.paths";
import { RETENTION_ROUTES } from "./routes/retention.paths";
import { RETRY_ROUTES } from "./routes/retry.paths";
import { SCHEDULES_ROUTES } from "./routes/schedules.paths";
import { TASKS_ROUTES } from "./routes/tasks.paths";
import { TEMPLATES_ROUTES } from "./routes/templates.paths";
import { THREADS_ROUTES } from "./routes/threads.paths";
import { TOOL_SOURCES_ROUTES } from "./routes/tool-sources.paths";
import { TRIGGERS_ROUTES } from "./routes/triggers.paths";
import { USAGE_ROUTES } from "./routes/usage.paths";
import { WAITS_ROUTES } from "./routes/waits.paths";
import { WEBHOOKS_ROUTES } from "./routes/webhooks.paths";

export interface RouteGroup {
  /** The file under `routes/`, for messages. */
  name: string;
  /** `METHOD /path`, with Hono's `:param`, in the order the file registers them. */
  routes: readonly string[];
  /** Its register function, loaded on first use (each is a chunk of its own in a bundle). */
  load: () => Promise<(app: ApiApp) => void>;
}

/**
 * A route file's group: its declaration's routes, its code loaded by `load`.
 * The file's register function is handed the declaration rather than importing
 * it: a module that the start and one group's chunk both import would be a
 * chunk of its own in the bundle, one more file for the start to load per group.
 */
function lazyGroup<D extends RouteDeclaration<Record<string, RouteLine>>>(
  declaration: D,
  load: () => Promise<(app: ApiApp, routes: D) => void>,
): RouteGroup {
  return {
    name: declaration[DECLARED_IN],
    routes: honoRoutes(declaration),
    load: async () => {
      const register = await load();
      return (app) => register(app, declaration);
    },
  };
}

/** In the order the app registers them: a request that two routes match goes to the first. */
export const ROUTE_GROUPS: readonly RouteGroup[] = [
  lazyGroup(TASKS_ROUTES, async () => (await import("./routes/tasks")).registerTaskRoutes),
  lazyGroup(BRANCHES_ROUTES, async () => (await import("./routes/branches")).registerBranchRoutes),
  lazyGroup(RETRY_ROUTES, async () => (await import("./routes/retry")).registerRetryRoutes),
  lazyGroup(THREADS_ROUTES, async () => (await import("./routes/threads")).registerThreadRoutes),
  lazyGroup(BLOBS_ROUTES, async () => (await import("./routes/blobs")).registerBlobRoutes),
  lazyGroup(
    LLM_CALLS_ROUTES,
    async () => (await import("./routes/llm-calls")).registerLlmCallRoutes,
  ),
  lazyGroup(
    NAMESPACES_ROUTES,
    async () => (await import("./routes/namespaces")).registerNamespaceRoutes,
  ),
  lazyGroup(
    TOOL_SOURCES_ROUTES,
    async () => (await import("./routes/tool-sources")).registerToolSourceRoutes,
  ),
  lazyGroup(PLANS_ROUTES, async () => (await import("./routes/plans")).registerPlanRoutes),
  lazyGroup(KEYS_ROUTES, async () => (await import("./routes/keys")).registerKeyRoutes),
  lazyGroup(TRIGGERS_ROUTES, async () => (await import("./routes/triggers")).registerTriggerRoutes),
  lazyGroup(
    SCHEDULES_ROUTES,
    async () => (await import("./routes/schedules")).registerScheduleRoutes,
  ),
  lazyGroup(WEBHOOKS_ROUTES, async () => (await import("./routes/webhooks")).registerWebhookRoutes),
  lazyGroup(
    RETENTION_ROUTES,
    async () => (await import("./routes/retention")).registerRetentionRoutes,
  ),
  lazyGroup(USAGE_ROUTES, async () => (await import("./routes/usage")).registerUsageRoutes),
  lazyGroup(WAITS_ROUTES, async () => (await import("./routes/waits")).registerWaitRoutes),
  lazyGroup(
    TEMPLATES_ROUTES,
    async () => (await import("./routes/templates")).registerTemplateRoutes,
  ),
  lazyGroup(EVENTS_ROUTES, async () => (await import("./routes/events")).registerEventRoutes),
  lazyGroup(
    KNOWLEDGE_ROUTES,
    async () => (await import("./routes/knowledge")).registerKnowledgeRoutes,
  ),
  lazyGroup(FILES_ROUTES, async () => (await import("./routes/files")).registerFileRoutes),
  lazyGroup(DOCTOR_ROUTES, async () => (await import("./routes/doctor")).registerDoctorRoutes),
  lazyGroup(OPENAI_ROUTES, async () => (await import("./routes/openai")).registerOpenAiRoutes),
  lazyGroup(MCP_ROUTES, async () => (await import("./routes/mcp")).registerMcpRoutes),
];
