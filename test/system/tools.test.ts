// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans carry ${name} references
/**
 * A namespace's own tools through the whole local stack: one registry feeds the
 * planner's and the replanner's prompts, the validator, `GET /v1/tools` and the
 * executor, so a tool the first plan could call, a replan can call too.
 */
import { describe, expect, it } from "vitest";
import { useTestStack } from "../support/stack";

const t = useTestStack();

const call = (seq_no: number, tool_name: string, tool_params: object, output_vars: string[]) => ({
  seq_no,
  type: "calling",
  parameters: { tool_name, tool_params, output_vars },
});
const finish = (seq_no: number, value: unknown) => ({
  seq_no,
  type: "assign",
  parameters: { final_answer: value },
});

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
