/**
 * Which methods a path takes, read from the app's own routing table, so that a
 * request with another method answers 405 with `Allow` instead of a 404 that
 * reads as "no such path" (`PUT /v1/tasks`, `DELETE /v1/tools`).
 */
import type { ApiApp } from "./env";

interface RouteEntry {
  method: string;
  pattern: RegExp;
}

/** `/v1/tasks/:task_id` as a regular expression of the whole path. */
function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}$`);
}

/**
 * A function from a path to the methods its routes take (`HEAD` with `GET`, as
 * Hono answers it), sorted; empty for a path no route has. The table is built on
 * first use, once every route is registered.
 *
 * @example
 * allowedMethods(app)("/v1/tasks") // ["GET", "HEAD", "POST"]
 */
export function allowedMethods(app: ApiApp): (path: string) => string[] {
  let table: RouteEntry[] | undefined;
  return (path) => {
    // Middleware (method ALL, paths with *) is not a route of its own.
    table ??= app.routes
      .filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) => ({ method: r.method, pattern: patternOf(r.path) }));
    const methods = new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}
