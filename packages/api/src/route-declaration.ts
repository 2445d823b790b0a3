/**
 * How a route file declares its routes so that the API's start can route them
 * without loading the file (`lazy-routes.ts`): each `routes/x.ts` has a tiny
 * `routes/x.paths.ts` naming its routes, in its order, as
 * `operationId: "METHOD /path/{param}"`; `route-groups.ts` hands it to `x.ts`'s
 * register function, which builds each route from its entry
 * (`createRoute({ ...routes.getThing, summary, ... })`). A route's
 * method, path and operationId are so written once: the start registers them
 * from the declaration, the document takes them from the route, and the file
 * cannot register a route its declaration does not name (`chainsOf` throws).
 * The declaration imports nothing but this file, so a bundle's start, which
 * holds every module a static import reaches, holds no route's code; and the
 * route file imports only its type, so the declaration is not also a module of
 * the group's chunk (which would make it a chunk of its own).
 */

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** `METHOD /path`, the path in OpenAPI's form (`{param}`). */
export type RouteLine = `${Method} /${string}`;

/** One declared route, ready to spread into `createRoute`. */
export interface DeclaredRoute<M extends string = string, P extends string = string> {
  method: Lowercase<M>;
  path: P;
  operationId: string;
}

/** Where the declaration is kept (not a route, so not among its entries). */
export const DECLARED_IN: unique symbol = Symbol("declared in");

/** A file's routes by operationId, each in `createRoute`'s shape. */
export type RouteDeclaration<R extends Record<string, RouteLine>> = {
  readonly [K in keyof R]: R[K] extends `${infer M} ${infer P}` ? DeclaredRoute<M, P> : never;
} & { readonly [DECLARED_IN]: string };

/**
 * Declares the routes `routes/{file}.ts` registers, in the order it registers
 * them: a request that two routes match goes to the first.
 *
 * @example
 * export const RETRY_ROUTES = declareRoutes("retry", {
 *   retryTask: "POST /v1/tasks/{task_id}/retry",
 * });
 * // in retry.ts, registerRetryRoutes(app, routes: typeof RETRY_ROUTES):
 * // createRoute({ ...routes.retryTask, summary: "...", ... })
 */
export function declareRoutes<const R extends Record<string, RouteLine>>(
  file: string,
  routes: R,
): RouteDeclaration<R> {
  const declared: Record<string | symbol, unknown> = { [DECLARED_IN]: file };
  for (const [operationId, line] of Object.entries(routes)) {
    const [method = "", path = ""] = line.split(" ");
    declared[operationId] = { method: method.toLowerCase(), path, operationId };
  }
  return declared as RouteDeclaration<R>;
}

/**
 * The declaration's routes as Hono matches them, `METHOD /path/:param`, in order.
 *
 * @example
 * honoRoutes(RETRY_ROUTES) // ["POST /v1/tasks/:task_id/retry"]
 */
export function honoRoutes(declaration: RouteDeclaration<Record<string, RouteLine>>): string[] {
  return Object.values(declaration).map(
    ({ method, path }) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`,
  );
}
