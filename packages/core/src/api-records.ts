/**
 * `@stackvm/core/api-records`: the schemas of the records and inputs that only
 * the HTTP API's routes parse and answer with (a task, its branches and
 * commits, a namespace, a schedule, an MCP server, a fork request, a thread's next turn, a
 * task's start, whose schema the worker builds only when a thread's turn starts one). An entry of
 * its own, apart from `index.ts`: the API loads each group of routes on its
 * first request, and esbuild puts a module in every start that reaches it, even
 * through a re-export nobody there reads, so these hundreds of schemas would be
 * built at every cold start if the entry point re-exported them
 * (docs/deploy.md, "Cold starts"). `index.ts` exports their types.
 */
export { Branch, Commit, Diff, State, Status, Task } from "./model";
export { ForkInput } from "./service/fork-input";
export { Namespace, NamespaceInput } from "./service/namespace-input";
export { CreateScheduleInput, Schedule, UpdateScheduleInput } from "./service/schedule-input";
export { CreateTaskInput } from "./service/task-input";
export { ContinueTaskInput } from "./service/thread-input";
export { McpServer, McpServerDefinition } from "./tools/sources/mcp-shapes";
