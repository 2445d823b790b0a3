/**
 * The console's pages and the paths under `/ui` that name them. Real paths (not
 * `#` fragments), so that a task or a commit can be linked and reloaded: the
 * server answers the console's page for every path under `/ui`.
 */

/** The console's base path. */
export const BASE = "/ui";

export type Route =
  | { page: "tasks" }
  | { page: "new-task" }
  | { page: "task"; taskId: string }
  | { page: "namespaces" }
  | { page: "templates" }
  | { page: "triggers" }
  | { page: "schedules" }
  | { page: "knowledge" }
  | { page: "usage" }
  | { page: "files" }
  | { page: "not-found"; path: string };

const LIST_PAGES = new Set([
  "namespaces",
  "templates",
  "triggers",
  "schedules",
  "knowledge",
  "usage",
  "files",
]);

/**
 * Reads a path as a route.
 *
 * @example
 * parseRoute("/ui/tasks/tsk_1") // { page: "task", taskId: "tsk_1" }
 */
export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  let parts: string[];
  try {
    parts = rest.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return { page: "not-found", path: pathname };
  }
  const [first, second] = parts;
  if (parts.length === 0 || (first === "tasks" && parts.length === 1)) return { page: "tasks" };
  if (first === "tasks" && second === "new" && parts.length === 2) return { page: "new-task" };
  if (first === "tasks" && second && parts.length === 2) return { page: "task", taskId: second };
  if (first && parts.length === 1 && LIST_PAGES.has(first)) {
    return { page: first as Exclude<Route["page"], "tasks" | "new-task" | "task" | "not-found"> };
  }
  return { page: "not-found", path: pathname };
}

/** The path of a task's page, optionally with a commit selected. */
export function taskPath(taskId: string, commitId?: string | null): string {
  const path = `${BASE}/tasks/${encodeURIComponent(taskId)}`;
  return commitId ? `${path}?commit=${encodeURIComponent(commitId)}` : path;
}
