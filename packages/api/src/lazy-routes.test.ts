import { createRoute, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { allowedMethods } from "./allowed-methods";
import type { ApiApp } from "./env";
import { notFound, onError } from "./errors";
import { chainsOf, newApiApp, registerLazyRoutes } from "./lazy-routes";
import { ROUTE_GROUPS, type RouteGroup } from "./route-groups";

/** A group of two routes whose loads are counted; `fail` makes the next loads throw. */
function countedGroup() {
  const state = { loads: 0, fail: false };
  const register = (app: ApiApp) => {
    app.openapi(
      createRoute({
        method: "post",
        path: "/v1/notes/{note_id}",
        middleware: [
          async (c, next) => {
            c.header("x-group-middleware", "ran");
            await next();
          },
        ] as const,
        request: {
          params: z.object({ note_id: z.string().regex(/^n\d+$/) }),
          body: { content: { "application/json": { schema: z.object({ text: z.string() }) } } },
        },
        responses: { 201: { description: "made" } },
      }),
      (c) =>
        c.json(
          {
            note: c.req.valid("param").note_id,
            text: c.req.valid("json").text,
            // Set by the app's own middleware, before the group was loaded.
            request_id: c.get("requestId"),
          },
          201,
        ),
    );
    app.get("/v1/notes/:note_id/boom", () => {
      throw new Error("the handler broke");
    });
  };
  const group: RouteGroup = {
    name: "notes",
    routes: ["POST /v1/notes/:note_id", "GET /v1/notes/:note_id/boom"],
    load: async () => {
      state.loads++;
      // Let concurrent first requests overlap the load.
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (state.fail) throw new Error("the chunk did not load");
      return register;
    },
  };
  return { group, state };
}

/** An app as createApp builds one, around the given groups. */
function appWith(groups: readonly RouteGroup[]) {
  const app = newApiApp();
  app.use("*", async (c, next) => {
    c.set("requestId", "req_1");
    await next();
  });
  registerLazyRoutes(app, groups);
  app.get("/v1/notes/:note_id/other", (c) => c.text("the app's own route"));
  const allowed = allowedMethods(app);
  app.notFound((c) => notFound(c, allowed(c.req.path)));
  app.onError(onError);
  return app;
}

const post = (text: unknown, id = "n1") => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ text }),
  path: `/v1/notes/${id}`,
});

describe("routes loaded on their group's first request", () => {
  it("loads no group at start, and a group once for its first requests, concurrent ones included", async () => {
    const { group, state } = countedGroup();
    const app = appWith([group]);
    expect(state.loads).toBe(0);
    const { path, ...init } = post("hi");
    const answers = await Promise.all([1, 2, 3].map(() => app.request(path, init)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    await app.request(path, init);
    expect(state.loads).toBe(1);
  });

  it("runs the group's middleware, validators and handler on the app's context", async () => {
    const app = appWith([countedGroup().group]);
    const { path, ...init } = post("hello", "n42");
    const answer = await app.request(path, init);
    expect(answer.status).toBe(201);
    expect(answer.headers.get("x-group-middleware")).toBe("ran");
    expect(await answer.json()).toEqual({ note: "n42", text: "hello", request_id: "req_1" });
  });

  it("answers a body or a parameter that fails the route's schema 400, as a route registered whole", async () => {
    const app = appWith([countedGroup().group]);
    const badBody = post(7);
    const refused = await app.request(badBody.path, badBody);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: "malformed_request", message: expect.stringContaining("text") },
    });
    const badParam = post("hi", "x1");
    expect((await app.request(badParam.path, badParam)).status).toBe(400);
  });

  it("answers 405 with Allow for a method no route of a group takes, before the group loads", async () => {
    const { group, state } = countedGroup();
    const app = appWith([group]);
    const answer = await app.request("/v1/notes/n1", { method: "DELETE" });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("POST");
    expect(state.loads).toBe(0);
  });

  it("hands a handler's error to the app's error handler, and goes on to the app's later routes", async () => {
    const app = appWith([countedGroup().group]);
    const broke = await app.request("/v1/notes/n1/boom");
    expect(broke.status).toBe(500);
    expect(await broke.json()).toMatchObject({ error: { code: "internal" } });
    const other = await app.request("/v1/notes/n1/other");
    expect(await other.text()).toBe("the app's own route");
  });

  it("answers 500 while a group cannot load, and loads it again on the next request", async () => {
    const { group, state } = countedGroup();
    const app = appWith([group]);
    state.fail = true;
    const { path, ...init } = post("hi");
    expect((await app.request(path, init)).status).toBe(500);
    state.fail = false;
    expect((await app.request(path, init)).status).toBe(201);
    expect(state.loads).toBe(2);
  });

  it("refuses a group that registers other routes than its list, naming both", async () => {
    const { group } = countedGroup();
    const register = await group.load();
    const wrong = { ...group, routes: ["POST /v1/notes/:note_id"] };
    expect(() => chainsOf(group, register)).not.toThrow();
    expect(() => chainsOf(wrong, register)).toThrow(
      /routes\/notes\.ts registers .*GET \/v1\/notes\/:note_id\/boom.*but route-groups\.ts lists/,
    );
  });
});

describe("the API's route groups", () => {
  it("list exactly the routes each group's file registers, in its order", async () => {
    for (const group of ROUTE_GROUPS) {
      const register = await group.load();
      expect(() => chainsOf(group, register), group.name).not.toThrow();
    }
  });

  it("list each route once", () => {
    const routes = ROUTE_GROUPS.flatMap((group) => group.routes);
    expect(routes.filter((route, i) => routes.indexOf(route) !== i)).toEqual([]);
  });
});
