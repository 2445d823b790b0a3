/**
 * `knowledge_add` through the whole local stack: one task's step writes a fact
 * to a knowledge base (LanceDB on the S3 emulator, the scripted server's
 * embeddings), the written chunk is on its commit, and the next task's
 * `vector_search` finds it. A second tenant cannot write to the first one's
 * knowledge base, nor read what was written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let other: string;

const FACT = "The Lisbon office door code is 4417; the office moved to Alfama in March.";

const plan = (steps: Array<Record<string, unknown>>) =>
  steps.map((step, seq_no) => ({ seq_no, ...step }));

async function run(steps: Array<Record<string, unknown>>, key = t.apiKey) {
  const started = await t.api("POST", "/v1/tasks", { plan: plan(steps) }, { key });
  expect(started.status).toBe(202);
  return t.waitForTask(started.body.task_id, { key });
}

beforeAll(async () => {
  t = await startTestStack({ env: { EMBEDDING_MODEL: "scripted-embedding" } });
  t.llm.on("knowledge_graph", () => ({ entities: [], relationships: [] }));
  other = (
    await t.api("POST", "/v1/admin/tenants/intruder/keys", { name: "b" }, { key: ADMIN_KEY })
  ).body.key;
  expect((await t.api("POST", "/v1/knowledge-bases", { name: "memory" })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

describe("a memory plans write", () => {
  it("answers a fact written by one task's step to the next task's vector_search", async () => {
    const writer = await run([
      {
        type: "calling",
        parameters: {
          tool_name: "knowledge_add",
          tool_params: { text: FACT, title: "Lisbon office" },
          output_vars: ["saved"],
        },
      },
      { type: "assign", parameters: { final_answer: "${saved.document_id}" } },
    ]);
    expect(writer.status).toBe("completed");
    expect(writer.final_answer).toMatch(/^mem_[0-9a-f]{32}$/);

    const commits = (await t.api("GET", `/v1/tasks/${writer.task_id}/branches/main/commits`)).body
      .commits;
    const step = commits.find((c: any) => JSON.stringify(c).includes('"knowledge_add"'));
    const written = JSON.stringify(step);
    expect(written).toContain(FACT);
    expect(written).toContain(`${writer.final_answer}:`);

    const reader = await run([
      {
        type: "calling",
        parameters: {
          tool_name: "vector_search",
          tool_params: { query: "What is the Lisbon office door code?", top_k: 1 },
          output_vars: ["found"],
        },
      },
      { type: "assign", parameters: { final_answer: "${found.0.text}" } },
    ]);
    expect(reader.status).toBe("completed");
    expect(reader.final_answer).toBe(FACT);

    const documents = (await t.api("GET", "/v1/knowledge-bases/memory/documents")).body.documents;
    expect(documents).toEqual([
      expect.objectContaining({
        document_id: writer.final_answer,
        filename: "lisbon-office.md",
        status: "ready",
        chunks: 1,
      }),
    ]);
  });

  it("refuses a second tenant's write to the first one's knowledge base, and shows it nothing", async () => {
    t.llm.on("plan_update", {
      reasoning: "the knowledge base is not ours",
      resume_at: 0,
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "refused" } }],
    });
    const intruder = await run(
      [
        {
          type: "calling",
          parameters: {
            tool_name: "knowledge_add",
            tool_params: { text: "Planted.", knowledge_base: "memory" },
            output_vars: ["saved"],
          },
        },
        { type: "assign", parameters: { final_answer: "${saved.document_id}" } },
      ],
      other,
    );
    // The step error goes to the planner, which gives up.
    expect(intruder.final_answer).toBe("refused");
    const update = t.llm.requests.find((r) => r.schemaName === "plan_update");
    expect(JSON.stringify(update?.messages)).toContain("knowledge_base_unavailable");
    const documents = (await t.api("GET", "/v1/knowledge-bases/memory/documents")).body.documents;
    expect(documents.map((d: any) => d.filename)).toEqual(["lisbon-office.md"]);
    const search = await run(
      [
        {
          type: "calling",
          parameters: {
            tool_name: "vector_search",
            tool_params: { query: "Lisbon office door code" },
            output_vars: ["found"],
          },
        },
        { type: "assign", parameters: { final_answer: "${found}" } },
      ],
      other,
    );
    expect(search.final_answer).toEqual([]);
  });
});
