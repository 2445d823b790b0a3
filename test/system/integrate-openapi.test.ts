/**
 * The published contract: `/openapi.json` validates as OpenAPI 3.1 and names every
 * route of the spec (shared/spec/http-api.md), and `/docs` works offline.
 */
import { readFileSync } from "node:fs";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../support/stack";

/** Every route of the spec, as its tables list them. */
const SPEC_ROUTES = [
  "get /healthz",
  "get /openapi.json",
  "get /docs",
  "get /ui",
  "post /v1/tasks",
  "get /v1/tasks",
  "get /v1/tasks/{task_id}",
  "post /v1/tasks/{task_id}/cancel",
  "delete /v1/tasks/{task_id}",
  "get /v1/tasks/{task_id}/branches",
  "get /v1/tasks/{task_id}/branches/{name}",
  "get /v1/tasks/{task_id}/branches/{name}/commits",
  "post /v1/tasks/{task_id}/branches",
  "post /v1/tasks/{task_id}/branches/{name}/promote",
  "delete /v1/tasks/{task_id}/branches/{name}",
  "get /v1/tasks/{task_id}/commits/{commit_id}",
  "get /v1/tasks/{task_id}/commits/{commit_id}/state",
  "get /v1/tasks/{task_id}/commits/{commit_id}/diff",
  "post /v1/tasks/{task_id}/commits/{commit_id}/save-plan",
  "get /v1/tasks/{task_id}/events",
  "get /v1/tools",
  "get /v1/namespaces",
  "put /v1/namespaces/{name}",
  "get /v1/namespaces/{name}",
  "delete /v1/namespaces/{name}",
  "post /v1/namespaces/{name}/tools",
  "delete /v1/namespaces/{name}/tools/{tool}",
  "post /v1/triggers",
  "get /v1/triggers/{trigger_id}",
  "delete /v1/triggers/{trigger_id}",
  "post /v1/hooks/{trigger_id}",
  "post /v1/schedules",
  "get /v1/schedules",
  "get /v1/schedules/{schedule_id}",
  "patch /v1/schedules/{schedule_id}",
  "delete /v1/schedules/{schedule_id}",
  "post /v1/keys",
  "get /v1/keys",
  "delete /v1/keys/{key_id}",
  "post /v1/admin/tenants/{tenant}/keys",
  "get /v1/webhook-secret",
  // Version 1.1: tool sources, plan validation, knowledge bases, waits, retry, LLM traces.
  "post /v1/namespaces/{name}/mcp-servers",
  "get /v1/namespaces/{name}/mcp-servers",
  "post /v1/namespaces/{name}/mcp-servers/{server}/refresh",
  "delete /v1/namespaces/{name}/mcp-servers/{server}",
  "post /v1/namespaces/{name}/http-tools",
  "delete /v1/namespaces/{name}/http-tools/{tool}",
  "post /v1/plans/validate",
  "post /v1/knowledge-bases",
  "get /v1/knowledge-bases",
  "get /v1/knowledge-bases/{kb}",
  "delete /v1/knowledge-bases/{kb}",
  "post /v1/knowledge-bases/{kb}/documents",
  "get /v1/knowledge-bases/{kb}/documents",
  "get /v1/knowledge-bases/{kb}/documents/{document_id}",
  "delete /v1/knowledge-bases/{kb}/documents/{document_id}",
  "post /v1/tasks/{task_id}/branches/{name}/input",
  "post /v1/resume/{token}",
  "post /v1/tasks/{task_id}/retry",
  "get /v1/tasks/{task_id}/commits/{commit_id}/llm-calls/{n}",
];

let t: TestStack;
let doc: {
  openapi: string;
  tags: Array<{ name: string; description: string }>;
  paths: Record<
    string,
    Record<string, { requestBody?: unknown; responses: unknown; tags?: string[] }>
  >;
};
beforeAll(async () => {
  t = await startTestStack();
  doc = (await t.api("GET", "/openapi.json", undefined, { key: null })).body;
});
afterAll(async () => {
  await t?.stop();
});

describe("/openapi.json", () => {
  it("validates as OpenAPI 3.1", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? "valid" : compileErrors(result)).toBe("valid");
  });

  it("lists every route of the spec", () => {
    const listed = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method} ${path}`),
      ),
    );
    expect(SPEC_ROUTES.filter((route) => !listed.has(route))).toEqual([]);
  });

  it("has the status waiting on branches, and their waiting state (version 1.1)", () => {
    const branch = (
      doc.paths["/v1/tasks/{task_id}/branches/{name}"]!.get!.responses as Record<
        string,
        { content: { "application/json": { schema: { properties: Record<string, unknown> } } } }
      >
    )["200"]!.content["application/json"].schema.properties;
    expect(JSON.stringify(branch.status)).toContain('"waiting"');
    expect(branch).toHaveProperty("waiting");
    expect(branch).toHaveProperty("group");
  });

  it("groups every route under one tag of its resource, each tag described", () => {
    const declared = doc.tags.map((tag) => tag.name);
    expect(declared).toEqual(expect.arrayContaining(["Tasks", "Branches", "Commits", "Health"]));
    expect(doc.tags.filter((tag) => tag.description.length < 10)).toEqual([]);
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ route: `${method} ${path}`, tags: op.tags })),
    );
    expect(operations.length).toBeGreaterThan(40);
    const untagged = operations.filter((op) => op.tags?.length !== 1);
    expect(untagged.map((op) => op.route)).toEqual([]);
    const unknown = operations.filter((op) => !declared.includes(op.tags![0]!));
    expect(unknown.map((op) => `${op.route}: ${op.tags}`)).toEqual([]);
    const used = new Set(operations.map((op) => op.tags![0]));
    expect(declared.filter((tag) => !used.has(tag))).toEqual([]);
    const tagOf = (route: string) => operations.find((op) => op.route === route)?.tags?.[0];
    expect(tagOf("post /v1/tasks")).toBe("Tasks");
    expect(tagOf("post /v1/tasks/{task_id}/branches/{name}/promote")).toBe("Branches");
    expect(tagOf("get /v1/tasks/{task_id}/commits/{commit_id}/diff")).toBe("Commits");
    expect(tagOf("post /v1/tasks/{task_id}/branches/{name}/input")).toBe("Waits");
    expect(tagOf("post /v1/namespaces/{name}/mcp-servers")).toBe("Tool sources");
    expect(tagOf("post /v1/hooks/{trigger_id}")).toBe("Triggers");
    expect(tagOf("get /healthz")).toBe("Health");
  });

  it("lists every route of the document on docs/http-api.md, under its method", () => {
    const page = readFileSync(new URL("../../docs/http-api.md", import.meta.url), "utf8");
    const listed = new Set(
      [...page.matchAll(/^\|\s*(GET|POST|PUT|PATCH|DELETE)\s*\|\s*`([^`]+)`/gm)].map(
        (m) => `${m[1]!.toLowerCase()} ${m[2]}`,
      ),
    );
    expect(listed.size).toBeGreaterThan(40);
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    expect(routes.filter((route) => !listed.has(route))).toEqual([]);
  });

  it("names the 400 and 415 of a JSON body on every route that takes one, and only there", () => {
    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops)) as Array<{
      requestBody?: { content?: Record<string, unknown> };
      responses: Record<string, { description: string }>;
    }>;
    const withJson = operations.filter((op) => op.requestBody?.content?.["application/json"]);
    expect(withJson.length).toBeGreaterThan(15);
    for (const op of withJson) {
      expect(op.responses["415"]?.description).toContain("Content-Type: application/json");
      expect(op.responses["400"]?.description).toContain("malformed_json");
    }
    const without = operations.filter((op) => !op.requestBody);
    expect(without.filter((op) => op.responses["415"])).toEqual([]);
  });

  it("carries request and response examples for the main routes", () => {
    const example = (path: string, method: string, where: "request" | number) => {
      const op = doc.paths[path]![method] as {
        requestBody?: { content: Record<string, { example?: unknown }> };
        responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
      };
      const content =
        where === "request" ? op.requestBody?.content : op.responses[String(where)]?.content;
      return content?.["application/json"]?.example;
    };
    expect(example("/v1/tasks", "post", "request")).toBeDefined();
    expect(example("/v1/tasks", "post", 202)).toBeDefined();
    expect(example("/v1/tasks/{task_id}", "get", 200)).toBeDefined();
    expect(example("/v1/triggers", "post", "request")).toBeDefined();
    expect(example("/v1/triggers", "post", 201)).toBeDefined();
    expect(example("/v1/hooks/{trigger_id}", "post", "request")).toBeDefined();
    expect(example("/v1/schedules", "post", "request")).toBeDefined();
    expect(example("/v1/schedules", "post", 201)).toBeDefined();
  });
});

describe("/docs", () => {
  it("serves an interactive reference that loads nothing from another host", async () => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('id="swagger-ui"');
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(2);
    expect(urls.filter((u) => !u.startsWith("/"))).toEqual([]);
    expect(html).not.toMatch(/https?:\/\//);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    for (const url of urls) {
      const asset = await fetch(`${t.url}${url}`);
      expect(asset.status, url).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(100);
    }
    const init = await (await fetch(`${t.url}/docs/assets/init.js`)).text();
    expect(init).toContain('url: "/openapi.json"');
    expect(init).toContain("validatorUrl: null");
  });

  it("may not be framed by another page", async () => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
  });
});

describe("security headers", () => {
  it.each([
    ["a health check", "/healthz", true],
    ["an API answer", "/v1/tasks", true],
    ["a refusal without a key", "/v1/tasks", false],
    ["an unknown route", "/v1/nowhere", true],
    ["the OpenAPI document", "/openapi.json", false],
  ])("sends nosniff and no framing with %s", async (_, path, withKey) => {
    const answer = await fetch(`${t.url}${path}`, {
      headers: withKey ? { authorization: `Bearer ${t.apiKey}` } : {},
    });
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(answer.headers.get("x-frame-options")).toBe("DENY");
  });
});
