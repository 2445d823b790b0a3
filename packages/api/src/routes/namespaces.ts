/**
 * `/v1/namespaces` and `/v1/tools`: what tasks may use.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { describeTool, Namespace, NamespaceInput } from "@stackvm/core";
import type { ApiApp } from "../env";
import { bearer, commonErrors, invalidError, json, jsonBody } from "../schemas";

const NameParam = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9_-]{1,64}$/)
    .openapi({ param: { name: "name", in: "path" } }),
});

const ToolInfo = z
  .object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
  })
  .openapi("Tool");

export function registerNamespaceRoutes(app: ApiApp): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/tools",
      summary: "List the built-in tools",
      security: bearer,
      responses: { 200: json(z.object({ tools: z.array(ToolInfo) }), "Tools"), ...commonErrors },
    }),
    (c) => c.json({ tools: [...c.get("deps").tools.values()].map(describeTool) }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/namespaces",
      summary: "List namespaces",
      security: bearer,
      responses: {
        200: json(z.object({ namespaces: z.array(Namespace) }), "Namespaces"),
        ...commonErrors,
      },
    }),
    async (c) =>
      c.json({ namespaces: await c.get("deps").namespaces.list(c.get("tenantId")) }, 200),
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/namespaces/{name}",
      summary: "Create or replace a namespace",
      security: bearer,
      request: { params: NameParam, ...jsonBody(NamespaceInput) },
      responses: { 200: json(Namespace, "The namespace"), ...commonErrors, ...invalidError },
    }),
    async (c) => {
      const ns = await c
        .get("deps")
        .namespaces.put(c.get("tenantId"), c.req.valid("param").name, c.req.valid("json"));
      return c.json(ns, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/namespaces/{name}",
      summary: "Read a namespace",
      security: bearer,
      request: { params: NameParam },
      responses: { 200: json(Namespace, "The namespace"), ...commonErrors },
    }),
    async (c) =>
      c.json(await c.get("deps").namespaces.get(c.get("tenantId"), c.req.valid("param").name), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/namespaces/{name}",
      summary: "Delete a namespace and its code tools",
      security: bearer,
      request: { params: NameParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      await c.get("deps").namespaces.delete(c.get("tenantId"), c.req.valid("param").name);
      return c.body(null, 204);
    },
  );
}
