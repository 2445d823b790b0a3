/**
 * The resource each route belongs to, as `/docs` groups them: one table from a
 * path to its tag, applied to every route in the registry when the document is
 * built, so that a route file need not remember to tag itself, and a new route
 * whose path fits no rule shows untagged (a test of the document fails on it).
 */
import type { ApiApp } from "./env";

/** The groups of `/docs`, in the order they are shown. */
export const API_TAGS = [
  {
    name: "Tasks",
    description: "Start a task from a goal or a plan, read it, cancel, retry, delete.",
  },
  {
    name: "Branches",
    description: "A task's branches: list, read, fork from a commit, promote, delete.",
  },
  {
    name: "Commits",
    description:
      "One commit per step: its instruction, inputs, outputs, state, diff and LLM calls.",
  },
  {
    name: "Events",
    description: "A task's commits and status changes as a Server-Sent Events stream.",
  },
  {
    name: "Waits",
    description: "Answer a branch waiting for a person (`ask_human`), by key or by resume URL.",
  },
  {
    name: "OpenAI-compatible",
    description:
      "Run a goal through OpenAI's chat completions (streamed or whole), and list the namespaces as models.",
  },
  {
    name: "Threads",
    description:
      "Conversations: continue a completed task as the next turn, list threads and their turns.",
  },
  { name: "Plans", description: "Validate a plan without running it." },
  { name: "Templates", description: "Plans saved from a commit, to start tasks from again." },
  { name: "Namespaces", description: "Which tools, hosts, limits and settings a task runs with." },
  {
    name: "Tools",
    description: "The tools a namespace's plans may call, with their input schemas.",
  },
  {
    name: "Tool sources",
    description: "Tools from outside: MCP servers and HTTP endpoints added to a namespace.",
  },
  {
    name: "Knowledge bases",
    description: "Documents to search from a plan (`vector_search`, `retrieve_knowledge_graph`).",
  },
  {
    name: "Files",
    description: 'A tenant\'s files, passed to tasks by reference (`{"$file": id}`).',
  },
  { name: "Triggers", description: "Start a task from a signed incoming webhook." },
  { name: "Schedules", description: "Start a task on a cron expression or an interval." },
  { name: "Webhooks", description: "The secret that signs the webhooks this service sends." },
  {
    name: "Keys",
    description: "API keys of a tenant; the operator's route that makes a tenant's first key.",
  },
  { name: "Quotas", description: "The operator's limits of a tenant, and its usage this month." },
  {
    name: "Usage",
    description: "A tenant's own steps, LLM calls, tokens and cost by month and namespace.",
  },
  { name: "Health", description: "Is the service up, and is it set up right." },
  {
    name: "Docs and console",
    description: "This document, its interactive page and the web console.",
  },
] as const;

export type ApiTag = (typeof API_TAGS)[number]["name"];

/** The first rule whose pattern matches a path (in OpenAPI form, `{param}`) names its tag. */
const RULES: Array<[RegExp, ApiTag]> = [
  [/^\/(healthz|v1\/doctor)$/, "Health"],
  [/^\/(openapi\.json|docs|ui)$/, "Docs and console"],
  [/^\/v1\/tasks\/\{task_id\}\/branches\/\{name\}\/input$/, "Waits"],
  [/^\/v1\/resume\//, "Waits"],
  [/^\/v1\/tasks\/\{task_id\}\/branches/, "Branches"],
  [/^\/v1\/tasks\/\{task_id\}\/commits\/\{commit_id\}\/save-plan$/, "Templates"],
  [/^\/v1\/tasks\/\{task_id\}\/commits/, "Commits"],
  [/^\/v1\/tasks\/\{task_id\}\/events$/, "Events"],
  [/^\/v1\/tasks\/\{task_id\}\/continue$/, "Threads"],
  [/^\/v1\/threads(\/|$)/, "Threads"],
  [/^\/v1\/tasks(\/|$)/, "Tasks"],
  [/^\/v1\/(chat\/completions|models)$/, "OpenAI-compatible"],
  [/^\/v1\/templates(\/|$)/, "Templates"],
  [/^\/v1\/plans\//, "Plans"],
  [/^\/v1\/tools$/, "Tools"],
  [/^\/v1\/namespaces\/\{name\}\/(mcp-servers|http-tools)(\/|$)/, "Tool sources"],
  [/^\/v1\/namespaces(\/|$)/, "Namespaces"],
  [/^\/v1\/knowledge-bases(\/|$)/, "Knowledge bases"],
  [/^\/v1\/files(\/|$)/, "Files"],
  [/^\/v1\/(triggers|hooks)(\/|$)/, "Triggers"],
  [/^\/v1\/schedules(\/|$)/, "Schedules"],
  [/^\/v1\/webhook-secret$/, "Webhooks"],
  [/^\/v1\/keys(\/|$)/, "Keys"],
  [/^\/v1\/admin\/tenants\/\{tenant\}\/keys$/, "Keys"],
  [/^\/v1\/admin\/tenants\/\{tenant\}\/quotas$/, "Quotas"],
  [/^\/v1\/usage$/, "Usage"],
];

/**
 * The tag of a path; undefined for a path no rule covers.
 *
 * @example
 * tagOf("/v1/tasks/{task_id}/branches/{name}/promote") // "Branches"
 */
export function tagOf(path: string): ApiTag | undefined {
  return RULES.find(([pattern]) => pattern.test(path))?.[1];
}

/** Gives every route in the app's registry that has no tag the tag of its path. */
export function tagRoutes(app: ApiApp): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route" || definition.route.tags?.length) continue;
    const tag = tagOf(definition.route.path);
    if (tag) definition.route.tags = [tag];
  }
}
