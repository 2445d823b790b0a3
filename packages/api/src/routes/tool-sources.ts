/**
 * A namespace's tool sources: its MCP servers and its HTTP tools
 * (`shared/spec/http-api.md`, "Tool sources"). Secret headers are sealed at rest
 * and shown as `***`; refused definitions leave nothing behind.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { HttpToolDefinition } from "@stackvm/core";
import { McpServer, McpServerDefinition } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import { bearer, commonErrors, invalidError, json, jsonBody } from "../schemas";
import type { TOOL_SOURCES_ROUTES } from "./tool-sources.paths";

const NameParam = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9_-]{1,64}$/)
    .openapi({ param: { name: "name", in: "path" } }),
});
const ServerParams = NameParam.extend({
  server: z
    .string()
    .regex(/^[a-z0-9_-]{1,32}$/)
    .openapi({ param: { name: "server", in: "path" } }),
});
const HttpToolParams = NameParam.extend({
  tool: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/)
    .openapi({ param: { name: "tool", in: "path" } }),
});

const ServerInfo = McpServer;
const HttpToolInfo = z
  .object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
    source: z.literal("http"),
  })
  .openapi("HttpTool");

export function registerToolSourceRoutes(app: ApiApp, routes: typeof TOOL_SOURCES_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.addMcpServer,
      summary: "Add an MCP server to a namespace",
      description:
        "Lists the server's tools once (Streamable HTTP) and stores it; plans call its tools as `server.tool`. Headers named in `secret_headers` are stored encrypted and never returned. The URL's host must be in the namespace's `allowed_hosts`.",
      security: bearer,
      request: { params: NameParam, ...jsonBody(McpServerDefinition) },
      responses: { 201: json(ServerInfo, "The server"), ...commonErrors, ...invalidError },
    }),
    async (c) => {
      const server = await c
        .get("deps")
        .toolSources.addMcpServer(
          c.get("tenantId"),
          c.req.valid("param").name,
          c.req.valid("json"),
        );
      return c.json(server, 201);
    },
  );

  app.openapi(
    createRoute({
      ...routes.listMcpServers,
      summary: "List a namespace's MCP servers",
      security: bearer,
      request: { params: NameParam },
      responses: {
        200: json(z.object({ mcp_servers: z.array(ServerInfo) }), "Servers"),
        ...commonErrors,
      },
    }),
    async (c) => {
      const servers = await c
        .get("deps")
        .toolSources.listMcpServers(c.get("tenantId"), c.req.valid("param").name);
      return c.json({ mcp_servers: servers }, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.refreshMcpServer,
      summary: "List an MCP server's tools again now",
      security: bearer,
      request: { params: ServerParams },
      responses: { 200: json(ServerInfo, "The server"), ...commonErrors, ...invalidError },
    }),
    async (c) => {
      const { name, server } = c.req.valid("param");
      return c.json(
        await c.get("deps").toolSources.refreshMcpServer(c.get("tenantId"), name, server),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteMcpServer,
      summary: "Remove an MCP server",
      security: bearer,
      request: { params: ServerParams },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      const { name, server } = c.req.valid("param");
      await c.get("deps").toolSources.deleteMcpServer(c.get("tenantId"), name, server);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      ...routes.addHttpTool,
      summary: "Add an HTTP tool to a namespace",
      description:
        "An endpoint of yours that plans call like any tool: the worker sends the input as JSON, signed with the tenant's webhook secret (Standard Webhooks), with the step's idempotency key; the answer must be JSON and match `output_schema` when given.",
      security: bearer,
      request: { params: NameParam, ...jsonBody(HttpToolDefinition()) },
      responses: { 201: json(HttpToolInfo, "The tool"), ...commonErrors, ...invalidError },
    }),
    async (c) => {
      const tool = await c
        .get("deps")
        .toolSources.addHttpTool(c.get("tenantId"), c.req.valid("param").name, c.req.valid("json"));
      return c.json({ ...tool, source: "http" as const }, 201);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteHttpTool,
      summary: "Delete an HTTP tool",
      security: bearer,
      request: { params: HttpToolParams },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      const { name, tool } = c.req.valid("param");
      await c.get("deps").toolSources.deleteHttpTool(c.get("tenantId"), name, tool);
      return c.body(null, 204);
    },
  );
}
