// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * A namespace's own tools through the whole local stack: one registry feeds the
 * planner's and the replanner's prompts, the validator, `GET /v1/tools` and the
 * executor, so a tool the first plan could call, a replan can call too.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, finish } from "../support/plans";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const t = useTestStack();

async function putNamespace(name: string, body: object) {
  const put = await t.api("PUT", `/v1/namespaces/${name}`, body);
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

describe("code tools in the registry", () => {
  it("lets a replan call the code tool that the first plan called", async () => {
    await putNamespace("codes", { allowed_tools: ["http_request"] });
    const saved = await t.api("POST", "/v1/namespaces/codes/tools", {
      name: "double",
      description: "Doubles n",
      input_schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      language: "javascript",
      code: "inputs.n * 2",
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    t.llm.on("plan_update", {
      reasoning: "call double again instead of the refused request",
      plan: [
        call(0, "double", { n: 2 }, ["x"]),
        call(1, "double", { n: "${x}" }, ["y"]),
        finish(2, "${y}"),
      ],
      resume_at: 1,
    });

    const created = await t.api("POST", "/v1/tasks", {
      namespace: "codes",
      plan: [
        call(0, "double", { n: 2 }, ["x"]),
        call(1, "http_request", { url: "https://refused.example/" }, ["page"]),
        finish(2, "${page}"),
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const task = await t.waitForTask(created.body.task_id);

    expect(task).toMatchObject({ status: "completed", final_answer: 8 });
    const update = t.llm.requests.find((r) => r.schemaName === "plan_update");
    expect(update?.messages[0]?.content).toContain("- double: Doubles n");
  });

  it("lists the namespace's tools by source under /v1/tools?namespace=", async () => {
    const listed = await t.api("GET", "/v1/tools?namespace=codes");
    expect(listed.status).toBe(200);
    const sources = Object.fromEntries(
      listed.body.tools.map((tool: { name: string; source: string }) => [tool.name, tool.source]),
    );
    expect(sources).toEqual({ http_request: "builtin", double: "code" });
  });

  it("answers 404 for a namespace the tenant does not have", async () => {
    const listed = await t.api("GET", "/v1/tools?namespace=nope");
    expect(listed.status).toBe(404);
  });
});

/** The integrator's endpoint: verifies our signature with the `standardwebhooks` package. */
interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}
let receiver: Server;
let receiverUrl = "";
const deliveries: Delivery[] = [];
let secret = "";

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    let verified = false;
    try {
      new Webhook(secret).verify(body, req.headers as Record<string, string>);
      verified = true;
    } catch {
      verified = false;
    }
    deliveries.push({ path: req.url ?? "", headers: req.headers, body, verified });
    if (!verified) {
      res.writeHead(401).end();
      return;
    }
    const input = JSON.parse(body) as { a: number; b: number };
    const answer = req.url === "/forged" ? { sum: "not a number" } : { sum: input.a + input.b };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

const addSchema = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
};
const sumSchema = {
  type: "object",
  properties: { sum: { type: "number" } },
  required: ["sum"],
};

describe("HTTP tools", () => {
  beforeAll(async () => {
    secret = (await t.api("GET", "/v1/webhook-secret")).body.secret;
    await putNamespace("hooks", { allowed_hosts: ["127.0.0.1"] });
    for (const [name, path] of [
      ["add", "/add"],
      ["forged", "/forged"],
    ]) {
      const added = await t.api("POST", "/v1/namespaces/hooks/http-tools", {
        name,
        description: "Adds a and b",
        url: `${receiverUrl}${path}`,
        input_schema: addSchema,
        output_schema: sumSchema,
      });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
    }
  });

  it("signs the call so the receiver verifies it, and returns its checked answer", async () => {
    deliveries.length = 0;
    const created = await t.api("POST", "/v1/tasks", {
      namespace: "hooks",
      plan: [call(0, "add", { a: 2, b: 3 }, ["out"]), finish(1, "${out.sum}")],
    });
    const task = await t.waitForTask(created.body.task_id);

    expect(task).toMatchObject({ status: "completed", final_answer: 5 });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ path: "/add", verified: true });
    expect(JSON.parse(deliveries[0]!.body)).toEqual({ a: 2, b: 3 });
    // A retried step is the same delivery: the idempotency key is the webhook id.
    expect(deliveries[0]!.headers["idempotency-key"]).toBe(deliveries[0]!.headers["webhook-id"]);
  });

  it("refuses an answer that does not match the output schema, naming the tool", async () => {
    t.llm.on("plan_update", { fault: "status", status: 400, message: "no replan here" });
    const created = await t.api("POST", "/v1/tasks", {
      namespace: "hooks",
      plan: [call(0, "forged", { a: 1, b: 1 }, ["out"]), finish(1, "${out.sum}")],
    });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status).toBe("failed");
    const commits = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`);
    const error = commits.body.commits.find(
      (c: { error: { code?: string } | null }) => c.error?.code === "http_tool_bad_output",
    );
    expect(error.error.message).toMatch(/'forged'.*output_schema/);
  });

  it("lists HTTP tools by source beside the built-ins", async () => {
    const listed = await t.api("GET", "/v1/tools?namespace=hooks");
    const http = listed.body.tools.filter((tool: { source: string }) => tool.source === "http");
    expect(http.map((tool: { name: string }) => tool.name).sort()).toEqual(["add", "forged"]);
    expect(http[0].input_schema).toEqual(addSchema);
  });

  it.each([
    ["the metadata address", "http://169.254.169.254/latest/meta-data", /metadata/],
    ["a host the namespace does not allow", "https://api.example.com/add", /allowed_hosts/],
    ["loopback over https when not listed", "https://localhost/add", /allowed_hosts/],
    [
      "loopback over http when not listed (the fix named: allowed_hosts)",
      "http://localhost:9/add",
      /the host 'localhost' is not in the allowed_hosts of the namespace 'hooks': add it/,
    ],
  ])("refuses a URL to %s with 422 and stores nothing", async (_what, url, message) => {
    const added = await t.api("POST", "/v1/namespaces/hooks/http-tools", {
      name: "sneaky",
      description: "x",
      url,
      input_schema: addSchema,
    });
    expect(added.status).toBe(422);
    expect(added.body.error.message).toMatch(message);
    const listed = await t.api("GET", "/v1/tools?namespace=hooks");
    expect(listed.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("sneaky");
  });

  it("refuses the metadata address when the tool is added, even when the namespace lists it", async () => {
    await putNamespace("meta", { allowed_hosts: ["169.254.169.254"] });
    const added = await t.api("POST", "/v1/namespaces/meta/http-tools", {
      name: "steal",
      description: "x",
      url: "https://169.254.169.254/latest/meta-data",
      input_schema: { type: "object" },
    });
    expect(added.status).toBe(422);
    expect(added.body.error.message).toMatch(
      /cloud metadata address.*allowed_hosts cannot open it/,
    );
    const listed = await t.api("GET", "/v1/tools?namespace=meta");
    expect(listed.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("steal");
  });

  it("refuses a schema violation at validation with a hint, and a taken name", async () => {
    const created = await t.api("POST", "/v1/tasks", {
      namespace: "hooks",
      plan: [call(0, "add", { a: "two", b: 3 }, ["out"]), finish(1, "${out}")],
    });
    expect(created.status).toBe(422);
    const [problem] = created.body.error.details.problems;
    expect(problem.message).toMatch(/do not fit "add"/);
    expect(problem.hint).toMatch(/a \(required\), b \(required\)/);
    const again = await t.api("POST", "/v1/namespaces/hooks/http-tools", {
      name: "add",
      description: "x",
      url: `${receiverUrl}/add`,
      input_schema: addSchema,
    });
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe("tool_exists");
  });

  it("is invisible to another tenant, whose delete answers 404", async () => {
    const key = await t.api(
      "POST",
      "/v1/admin/tenants/other/keys",
      { name: "b" },
      { key: ADMIN_KEY },
    );
    const other = key.body.key as string;
    const listed = await t.api("GET", "/v1/tools?namespace=hooks", undefined, { key: other });
    expect(listed.status).toBe(404);
    const deleted = await t.api("DELETE", "/v1/namespaces/hooks/http-tools/add", undefined, {
      key: other,
    });
    expect(deleted.status).toBe(404);
    const mine = await t.api("GET", "/v1/tools?namespace=hooks");
    expect(mine.body.tools.map((tool: { name: string }) => tool.name)).toContain("add");
  });
});

describe("several output_vars from one call", () => {
  it("asks llm_generate for exactly the four keys and fills all four", async () => {
    t.llm.on("output_vars", {
      title: "Kyoto",
      year: 794,
      sights: ["Kinkaku-ji"],
      meta: { ok: true },
    });
    const created = await t.api("POST", "/v1/tasks", {
      plan: [
        call(0, "llm_generate", { prompt: "Facts about Kyoto" }, [
          "title",
          "year",
          "sights",
          "meta",
        ]),
        finish(1, { title: "${title}", year: "${year}", sights: "${sights}", meta: "${meta}" }),
      ],
    });
    const task = await t.waitForTask(created.body.task_id);

    expect(task).toMatchObject({
      status: "completed",
      final_answer: { title: "Kyoto", year: 794, sights: ["Kinkaku-ji"], meta: { ok: true } },
    });
    const asked = t.llm.requests.find((r) => r.schemaName === "output_vars");
    expect(asked).toBeDefined();
    const format = asked!.responseFormat as { json_schema: { schema: { required: string[] } } };
    const schema = format.json_schema.schema;
    expect([...schema.required].sort()).toEqual(["meta", "sights", "title", "year"]);
  });

  it("fails the step naming the keys another tool's result lacks", async () => {
    t.llm.on("plan_update", { fault: "status", status: 400, message: "no replan here" });
    const created = await t.api("POST", "/v1/tasks", {
      plan: [
        { seq_no: 0, type: "assign", parameters: { obj: { a: 1 } } },
        call(1, "run_code", { language: "javascript", code: "({a: 1})" }, ["a", "b"]),
        finish(2, "${a}"),
      ],
    });
    const task = await t.waitForTask(created.body.task_id);
    const commits = await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`);
    const error = commits.body.commits.find(
      (c: { error: { code?: string } | null }) => c.error?.code === "output_missing_keys",
    );
    expect(error.error.message).toMatch(/lacks the keys/);
  });
});

describe("POST /v1/plans/validate and plans written for StackVM", () => {
  const stackvmPlan = [
    { seq_no: 0, type: "reasoning", parameters: { chain_of_thoughts: "double it" } },
    { seq_no: 1, type: "double", parameters: { n: 4, output_vars: ["2x"] } },
    { seq_no: 2, type: "assign", parameters: { final_answer: "${2x}" } },
    { seq_no: 3, type: "jmp", parameters: { target_seq: 42 } },
  ];

  it("answers the normalized plan and its warnings, and starts nothing", async () => {
    const before = (await t.api("GET", "/v1/tasks?limit=100")).body.tasks.length;
    const checked = await t.api("POST", "/v1/plans/validate", {
      plan: stackvmPlan,
      namespace: "codes",
    });
    expect(checked.status).toBe(200);
    expect(checked.body.valid).toBe(true);
    expect(checked.body.plan[1]).toEqual({
      seq_no: 1,
      type: "calling",
      parameters: { tool_name: "double", tool_params: { n: 4 }, output_vars: ["2x"] },
    });
    const codes = checked.body.warnings.map((w: { code: string }) => w.code);
    expect(codes).toEqual(expect.arrayContaining(["tool_as_type", "unknown_jump_target"]));
    expect((await t.api("GET", "/v1/tasks?limit=100")).body.tasks.length).toBe(before);
  });

  it("runs the same StackVM plan unchanged, answering the validator's warnings", async () => {
    const checked = await t.api("POST", "/v1/plans/validate", {
      plan: stackvmPlan,
      namespace: "codes",
    });
    const created = await t.api("POST", "/v1/tasks", { plan: stackvmPlan, namespace: "codes" });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body.warnings).toEqual(checked.body.warnings);
    expect(created.body.warnings.map((w: { code: string }) => w.code)).toEqual(
      expect.arrayContaining(["tool_as_type", "unknown_jump_target"]),
    );
    const again = await t.api(
      "POST",
      "/v1/tasks",
      { plan: stackvmPlan, namespace: "codes" },
      { headers: { "Idempotency-Key": "stackvm-plan-warnings" } },
    );
    const replayed = await t.api(
      "POST",
      "/v1/tasks",
      { plan: stackvmPlan, namespace: "codes" },
      { headers: { "Idempotency-Key": "stackvm-plan-warnings" } },
    );
    expect([again.status, replayed.status]).toEqual([202, 200]);
    expect(replayed.body.task_id).toBe(again.body.task_id);
    expect(replayed.body.warnings).toEqual(checked.body.warnings);
    expect(await t.waitForTask(created.body.task_id)).toMatchObject({
      status: "completed",
      final_answer: 8,
    });
  });

  it.each([
    ["not an array", { plan: { seq_no: 0 } }, "not_a_plan"],
    [
      "an unknown tool",
      { plan: [{ seq_no: 0, type: "calling", parameters: { tool_name: "nope" } }] },
      "unknown_tool",
    ],
  ])("answers valid: false with the problem for %s", async (_what, body, code) => {
    const checked = await t.api("POST", "/v1/plans/validate", body);
    expect(checked.status).toBe(200);
    expect(checked.body.valid).toBe(false);
    expect(checked.body.problems.map((p: { code: string }) => p.code)).toContain(code);
  });

  it("answers 404 for a namespace the tenant does not have, and 400 for a body that is not one", async () => {
    expect(
      (await t.api("POST", "/v1/plans/validate", { plan: [], namespace: "nope" })).status,
    ).toBe(404);
    const bad = await t.api("POST", "/v1/plans/validate", { plan: [], extra: 1 });
    expect(bad.status).toBe(400);
  });
});
