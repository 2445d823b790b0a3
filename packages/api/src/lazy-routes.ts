/**
 * Routes whose code loads on their group's first request. The app registers
 * every route of `route-groups.ts` (each file's declaration, `routes/*.paths.ts`)
 * at start by its method and path alone, so
 * that Hono's router (which takes no route after its first match) knows them
 * all, and `405`, `Allow` and the order of matching are as if each group were
 * registered whole. On a group's first request its file is imported, its
 * routes (schemas, validators, handlers) are registered on an app of its own,
 * and each request then runs that route's handlers on the app's own context:
 * the middleware's variables, the matched parameters and the error handler
 * are the app's. A cold start builds none of the routes' zod schemas
 * (docs/deploy.md, "Cold starts").
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { loadOnce } from "@stackvm/core";
import type { Context, MiddlewareHandler, Next } from "hono";
import type { ApiApp, ApiEnv } from "./env";
import { malformedBody } from "./errors";
import type { RouteGroup } from "./route-groups";

/** An app of the API's: a request that fails a route's schema is answered 400 with its problems. */
export function newApiApp(): ApiApp {
  return new OpenAPIHono<ApiEnv>({
    defaultHook: (result, c) => {
      if (!result.success) return c.json(malformedBody(result.error.issues), 400);
    },
  });
}

type Chain = MiddlewareHandler<ApiEnv>[];

/** Registers every group's routes on `app`, each loading its group's code on first use. */
export function registerLazyRoutes(app: ApiApp, groups: readonly RouteGroup[]): void {
  for (const group of groups) {
    const chains = loadOnce(async () => chainsOf(group, await group.load()));
    for (const route of group.routes) {
      const [method = "", path = ""] = route.split(" ");
      app.on(method, path, async (c, next) => {
        const chain = (await chains()).get(route);
        // chainsOf has checked that the group registers every route it lists.
        if (chain) await run(chain, c, next);
      });
    }
  }
}

/**
 * A group's routes registered on an app of its own: each route's handlers, in
 * order (its middleware, its validators, then its handler), by `METHOD /path`.
 * Throws when the group registers other routes than its declaration names
 * (`routes/*.paths.ts`, which `route-groups.ts` reads).
 */
export function chainsOf(group: RouteGroup, register: (app: ApiApp) => void): Map<string, Chain> {
  const groupApp = newApiApp();
  register(groupApp);
  const chains = new Map<string, Chain>();
  for (const { method, path, handler } of groupApp.routes) {
    const route = `${method} ${path}`;
    chains.set(route, [...(chains.get(route) ?? []), handler as MiddlewareHandler<ApiEnv>]);
  }
  const registered = [...chains.keys()];
  if (registered.join("\n") !== group.routes.join("\n")) {
    throw new Error(
      `routes/${group.name}.ts registers ${JSON.stringify(registered)}, but route-groups.ts lists ${JSON.stringify(group.routes)} from routes/${group.name}.paths.ts: make the declaration say what the file registers, in its order, and build each route from it`,
    );
  }
  return chains;
}

/**
 * Runs a route's handlers on the app's context as Hono's own dispatch runs
 * them: each gets `next` to the one after it, the last one's `next` goes on to
 * the app's next match, and a handler's answer becomes the context's unless an
 * answer is already set. A thrown error reaches the app's error handler.
 */
async function run(chain: Chain, c: Context<ApiEnv>, next: Next): Promise<void> {
  let index = -1;
  const dispatch = async (i: number): Promise<void> => {
    if (i <= index) throw new Error("next() called multiple times");
    index = i;
    const handler = chain[i];
    if (!handler) return next();
    const answer = await handler(c, () => dispatch(i + 1));
    if (answer instanceof Response && !c.finalized) c.res = answer;
  };
  await dispatch(0);
}
