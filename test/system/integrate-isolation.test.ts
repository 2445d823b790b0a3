/**
 * Tenant isolation, route by route: every route of the API that takes an id is
 * called with a second tenant's key on the first tenant's ids, and answers 404,
 * exactly as an id that does not exist. The list of routes comes from
 * `/openapi.json`, so a new route fails this test until it is walked too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
/** The first tenant's ids, filled in `beforeAll`. */
const ids: Record<string, string> = {};
let other: string;

const plan = [
  { seq_no: 0, type: "assign", parameters: { x: 2 } },
  { seq_no: 1, type: "assign", parameters: { final_answer: "${x}" } },
];

beforeAll(async () => {
  t = await startTestStack();
  const task = await t.api("POST", "/v1/tasks", { goal: "Answer two", plan });
  const taskId: string = task.body.task_id;
  ids.task_id = taskId;
  await t.waitForTask(taskId);
  const commits = await t.api("GET", `/v1/tasks/${ids.task_id}/branches/main/commits`);
  ids.commit_id = commits.body.commits[0].commit_id;
  ids.name = "main";
  ids.n = "0";
  const fork = await t.api("POST", `/v1/tasks/${ids.task_id}/branches`, {
    from_commit: commits.body.commits.at(-1).commit_id,
    name: "side",
  });
  expect(fork.status).toBe(202);
  const template = await t.api(
    "POST",
    `/v1/tasks/${ids.task_id}/commits/${ids.commit_id}/save-plan`,
  );
  ids.template_id = template.body.template_id;
  await t.api("PUT", "/v1/namespaces/private", { allowed_tools: ["llm_generate"] });
  ids.namespace = "private";
  const tool = await t.api("POST", "/v1/namespaces/private/tools", {
    name: "double",
    description: "Doubles n",
    input_schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    language: "javascript",
    code: "return n * 2;",
  });
  expect(tool.status).toBe(201);
  ids.tool = "double";
  ids.trigger_id = (await t.api("POST", "/v1/triggers", { name: "t", goal: "x" })).body.trigger_id;
  ids.schedule_id = (
    await t.api("POST", "/v1/schedules", { name: "s", cron: "0 9 * * *", plan })
  ).body.schedule_id;
  ids.key_id = (await t.api("POST", "/v1/keys", { name: "spare" })).body.key_id;
  const key = await t.api(
    "POST",
    "/v1/admin/tenants/intruder/keys",
    { name: "b" },
    { key: ADMIN_KEY },
  );
  other = key.body.key;
});
afterAll(async () => {
  await t?.stop();
});

const toolBody = {
  name: "triple",
  description: "Triples n",
  input_schema: { type: "object", properties: { n: { type: "number" } } },
  language: "javascript",
  code: "return n * 3;",
};

/** Bodies that pass validation, so that only the ownership check can answer. */
const WALK: Record<string, unknown> = {
  "get /v1/tasks/{task_id}": undefined,
  "delete /v1/tasks/{task_id}": undefined,
  "post /v1/tasks/{task_id}/cancel": undefined,
  "post /v1/tasks/{task_id}/retry": () => ({ from: "start" }),
  "post /v1/tasks/{task_id}/continue": () => ({ goal: "Go on from there." }),
  "put /v1/tasks/{task_id}/keep": undefined,
  "delete /v1/tasks/{task_id}/keep": undefined,
  "post /v1/tasks/{task_id}/stream-token": () => ({}),
  "get /v1/tasks/{task_id}/events": undefined,
  "get /v1/tasks/{task_id}/branches": undefined,
  "post /v1/tasks/{task_id}/branches": () => ({ from_commit: ids.commit_id, name: "theirs" }),
  "get /v1/tasks/{task_id}/branches/{name}": undefined,
  "delete /v1/tasks/{task_id}/branches/{name}": undefined,
  "get /v1/tasks/{task_id}/branches/{name}/commits": undefined,
  "post /v1/tasks/{task_id}/branches/{name}/promote": undefined,
  "get /v1/tasks/{task_id}/commits/{commit_id}": undefined,
  "get /v1/tasks/{task_id}/commits/{commit_id}/state": undefined,
  "get /v1/tasks/{task_id}/commits/{commit_id}/diff": undefined,
  "get /v1/tasks/{task_id}/commits/{commit_id}/llm-calls/{n}": undefined,
  "post /v1/tasks/{task_id}/commits/{commit_id}/save-plan": undefined,
  "get /v1/namespaces/{name}": undefined,
  "delete /v1/namespaces/{name}": undefined,
  "post /v1/namespaces/{name}/tools": () => toolBody,
  "delete /v1/namespaces/{name}/tools/{tool}": undefined,
  "get /v1/templates/{template_id}": undefined,
  "delete /v1/templates/{template_id}": undefined,
  "get /v1/triggers/{trigger_id}": undefined,
  "delete /v1/triggers/{trigger_id}": undefined,
  "get /v1/schedules/{schedule_id}": undefined,
  "patch /v1/schedules/{schedule_id}": () => ({ enabled: false }),
  "delete /v1/schedules/{schedule_id}": undefined,
  "delete /v1/keys/{key_id}": undefined,
};

/**
 * Routes with ids that are not walked, and why: the hook is verified by the
 * trigger's signature (no key at all), admin routes take only the operator key,
 * and PUT on a namespace name creates the caller's own namespace of that name.
 */
const NOT_WALKED = [
  "post /v1/hooks/{trigger_id}",
  "post /v1/admin/tenants/{tenant}/keys",
  "get /v1/admin/tenants/{tenant}/quotas",
  "put /v1/admin/tenants/{tenant}/quotas",
  "put /v1/namespaces/{name}",
];

/**
 * Routes whose isolation their own system tests walk with a second tenant,
 * because their records need set-up of their own (a knowledge base with a
 * document, a waiting branch, an MCP server, a stored blob): knowledge.test.ts,
 * tools.test.ts (HTTP tools and MCP servers), files.test.ts (an uploaded file), waits.test.ts and mcp.test.ts (a
 * tool's image as a blob), threads.test.ts (a thread, made by a continue). Any
 * other new route still fails the walk.
 */
const WALKED_ELSEWHERE = [
  "get /v1/tasks/{task_id}/blobs/{sha256}",
  "post /v1/namespaces/{name}/mcp-servers",
  "get /v1/namespaces/{name}/mcp-servers",
  "post /v1/namespaces/{name}/mcp-servers/{server}/refresh",
  "delete /v1/namespaces/{name}/mcp-servers/{server}",
  "post /v1/namespaces/{name}/http-tools",
  "delete /v1/namespaces/{name}/http-tools/{tool}",
  "post /v1/tasks/{task_id}/branches/{name}/input",
  "post /v1/resume/{token}",
  "get /v1/files/{file_id}",
  "delete /v1/files/{file_id}",
  "get /v1/files/{file_id}/content",
  "get /v1/knowledge-bases/{kb}",
  "delete /v1/knowledge-bases/{kb}",
  "post /v1/knowledge-bases/{kb}/documents",
  "get /v1/knowledge-bases/{kb}/documents",
  "get /v1/knowledge-bases/{kb}/documents/{document_id}",
  "delete /v1/knowledge-bases/{kb}/documents/{document_id}",
  "get /v1/threads/{thread_id}",
];

const fill = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = ids[name === "name" && path.startsWith("/v1/namespaces") ? "namespace" : name];
    if (id === undefined) throw new Error(`no id for {${name}} in ${path}`);
    return id;
  });

describe("tenant isolation", () => {
  it("walks every route with an id in the OpenAPI document", async () => {
    const doc = (await t.api("GET", "/openapi.json", undefined, { key: null })).body;
    const withIds = Object.entries(doc.paths as Record<string, object>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
      .filter((route) => route.includes("{"));
    expect(
      withIds.filter(
        (r) => !(r in WALK) && !NOT_WALKED.includes(r) && !WALKED_ELSEWHERE.includes(r),
      ),
    ).toEqual([]);
  });

  it("answers 404 to another tenant's key on every route, as for an id that does not exist", async () => {
    const answers: Record<string, number> = {};
    for (const [route, body] of Object.entries(WALK)) {
      const [method, path] = route.split(" ") as [string, string];
      const payload = typeof body === "function" ? body() : body;
      const res = await t.api(method.toUpperCase(), fill(path), payload, { key: other });
      answers[route] = res.status;
      if (res.status === 404) expect(res.body.error.code, route).toBe("not_found");
    }
    expect(answers).toEqual(Object.fromEntries(Object.keys(WALK).map((r) => [r, 404])));
  });

  it("left the first tenant's data as it was", async () => {
    const reads = [
      `/v1/tasks/${ids.task_id}`,
      `/v1/tasks/${ids.task_id}/branches/side`,
      `/v1/namespaces/${ids.namespace}`,
      `/v1/templates/${ids.template_id}`,
      `/v1/triggers/${ids.trigger_id}`,
      `/v1/schedules/${ids.schedule_id}`,
    ];
    for (const path of reads) expect((await t.api("GET", path)).status, path).toBe(200);
    expect((await t.api("GET", `/v1/schedules/${ids.schedule_id}`)).body.enabled).toBe(true);
    const ns = await t.api("GET", `/v1/namespaces/${ids.namespace}`);
    expect(ns.body.code_tools).toEqual(["double"]);
    const keys = await t.api("GET", "/v1/keys");
    expect(keys.body.keys.map((k: { key_id: string }) => k.key_id)).toContain(ids.key_id);
  });

  it("lists none of the first tenant's records to the second", async () => {
    for (const [path, field] of [
      ["/v1/tasks", "tasks"],
      ["/v1/triggers", "triggers"],
      ["/v1/schedules", "schedules"],
      ["/v1/templates", "templates"],
    ] as const) {
      const res = await t.api("GET", path, undefined, { key: other });
      expect(res.status, path).toBe(200);
      expect(res.body[field], path).toEqual([]);
    }
    const keys = await t.api("GET", "/v1/keys", undefined, { key: other });
    expect(keys.body.keys.map((k: { key_id: string }) => k.key_id)).not.toContain(ids.key_id);
    const namespaces = await t.api("GET", "/v1/namespaces", undefined, { key: other });
    expect(namespaces.body.namespaces.map((n: { name: string }) => n.name)).toEqual(["default"]);
  });
});
