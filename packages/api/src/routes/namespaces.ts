/**
 * `/v1/namespaces` and `/v1/tools`: what tasks may use.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { CodeToolDefinition, codeTool, loadJsonSchemaCompiler } from "@stackvm/core";
import { Namespace, NamespaceInput } from "@stackvm/core/api-records";
import { describeTool } from "@stackvm/core/tool-description";
import type { ApiApp } from "../env";
import { bearer, commonErrors, invalidError, json, jsonBody } from "../schemas";
import type { NAMESPACES_ROUTES } from "./namespaces.paths";

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
    source: z.enum(["builtin", "code", "http", "mcp"]),
  })
  .openapi("Tool");

const ToolsQuery = z.object({
  namespace: z
    .string()
    .regex(/^[a-z0-9_-]{1,64}$/, "a namespace name is 1 to 64 of a-z, 0-9, _ and -")
    .optional()
    .openapi({
      param: { name: "namespace", in: "query" },
      description:
        "List every tool this namespace can call (built-in, code, HTTP, MCP) instead of the built-ins.",
    }),
});

export function registerNamespaceRoutes(app: ApiApp, routes: typeof NAMESPACES_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.listTools,
      summary: "List the tools a namespace can call, or the built-ins",
      security: bearer,
      request: { query: ToolsQuery },
      responses: { 200: json(z.object({ tools: z.array(ToolInfo) }), "Tools"), ...commonErrors },
    }),
    async (c) => {
      const { namespace } = c.req.valid("query");
      if (namespace === undefined) {
        return c.json({ tools: [...c.get("deps").tools.values()].map(describeTool) }, 200);
      }
      const { tools } = await c.get("deps").namespaces.resolve(c.get("tenantId"), namespace);
      const callable = [...tools.all.values()].filter((tool) => tools.allowed.has(tool.name));
      return c.json({ tools: callable.map(describeTool) }, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.listNamespaces,
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
      ...routes.putNamespace,
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
      ...routes.getNamespace,
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
      ...routes.deleteNamespace,
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

  const ToolParams = NameParam.extend({
    tool: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/)
      .openapi({ param: { name: "tool", in: "path" } }),
  });

  app.openapi(
    createRoute({
      ...routes.addCodeTool,
      summary: "Save a code tool in a namespace",
      description:
        "A program (typically the final code of a `code_task`) that plans in this namespace can call like any tool; it runs in the sandbox with the tool's input as its inputs.",
      security: bearer,
      request: { params: NameParam, ...jsonBody(CodeToolDefinition()) },
      responses: { 201: json(ToolInfo, "The saved tool"), ...commonErrors, ...invalidError },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const definition = c.req.valid("json");
      // A bad definition answers 422 before a missing namespace answers 404.
      await loadJsonSchemaCompiler();
      const tool = codeTool(definition);
      await c.get("deps").namespaces.addCodeTool(c.get("tenantId"), name, definition);
      return c.json(describeTool(tool), 201);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteCodeTool,
      summary: "Delete a code tool",
      security: bearer,
      request: { params: ToolParams },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      const { name, tool } = c.req.valid("param");
      await c.get("deps").namespaces.deleteCodeTool(c.get("tenantId"), name, tool);
      return c.body(null, 204);
    },
  );
}
