/**
 * Knowledge spends from the tenant's monthly budget, through the whole local
 * stack: an ingest's graph calls and embeddings, and a search step's query
 * embedding, count in the month's usage; an ingest with the month spent, or
 * that spends what was left, stops with a clear error on its document.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { settledDocuments, uploadDocument } from "../support/knowledge";
import { ADMIN_KEY, useTestStack } from "../support/stack";

const t = useTestStack({ env: { EMBEDDING_MODEL: "scripted-embedding" } });

const graph = { entities: [{ name: "Kyoto", description: "a city" }], relationships: [] };
const markdown = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `# Part ${i}\n\n${"Kyoto temples and gardens. ".repeat(40)}`,
  ).join("\n\n");

async function monthTokens(): Promise<number> {
  const report = await t.api("GET", "/v1/admin/tenants/local/quotas", undefined, {
    key: ADMIN_KEY,
  });
  expect(report.status).toBe(200);
  return report.body.usage.tokens as number;
}

async function setTokenBudget(tokens: number | null): Promise<void> {
  const put = await t.api(
    "PUT",
    "/v1/admin/tenants/local/quotas",
    { monthly_token_budget: tokens },
    { key: ADMIN_KEY },
  );
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

async function ingest(kb: string, name: string, text: string) {
  const sent = await uploadDocument(t, kb, { name, type: "text/markdown", bytes: text });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  const documents = await settledDocuments(t, kb);
  return documents.find((d) => d.document_id === sent.body.document_id);
}

beforeAll(async () => {
  expect((await t.api("POST", "/v1/knowledge-bases", { name: "month" })).status).toBe(201);
});

describe("knowledge and the monthly budget", () => {
  it("counts an ingest's graph and embedding tokens in the month", async () => {
    t.llm.on("knowledge_graph", graph);
    await setTokenBudget(10_000_000);
    const before = await monthTokens();
    const doc = await ingest("month", "kyoto.md", markdown(2));
    expect(doc.status).toBe("ready");
    const spent = doc.usage.input_tokens + doc.usage.output_tokens;
    expect(doc.usage.embedding_tokens).toBeGreaterThan(0);
    expect(await monthTokens()).toBe(before + spent);
  });

  it("counts a search step's query embedding in the month when its task ends", async () => {
    const before = await monthTokens();
    const started = await t.api("POST", "/v1/tasks", {
      plan: [
        {
          seq_no: 0,
          type: "calling",
          parameters: {
            tool_name: "vector_search",
            tool_params: { query: "Kyoto temples" },
            output_vars: ["chunks"],
          },
        },
        { seq_no: 1, type: "assign", parameters: { final_answer: "done" } },
      ],
    });
    const task = await t.waitForTask(started.body.task_id);
    expect(task.status).toBe("completed");
    expect(task.usage.input_tokens).toBeGreaterThan(0);
    // The month counts a task when its terminal hooks ran, just after its status.
    await expect
      .poll(monthTokens)
      .toBe(before + task.usage.input_tokens + task.usage.output_tokens);
  });

  it("fails the document with the reason when the month is spent, and spends nothing", async () => {
    t.llm.on("knowledge_graph", graph);
    await setTokenBudget(await monthTokens());
    const before = await monthTokens();
    const graphCalls = t.llm.requests.length;
    const doc = await ingest("month", "spent.md", markdown(1));
    expect(doc.status).toBe("failed");
    expect(doc.error.code).toBe("budget_exceeded");
    expect(doc.error.message).toMatch(/monthly budget is spent; upload the document again/);
    expect(t.llm.requests.length).toBe(graphCalls);
    expect(await monthTokens()).toBe(before);
  });

  it("stops an ingest that spends what was left, counting what it spent", async () => {
    t.llm.on("knowledge_graph", graph);
    const before = await monthTokens();
    await setTokenBudget(before + 5);
    const doc = await ingest("month", "long.md", markdown(6));
    expect(doc.status).toBe("failed");
    expect(doc.error.code).toBe("budget_exceeded");
    expect(doc.error.message).toMatch(/ran out during this ingest/);
    expect(doc.chunks).toBe(0);
    const spent = doc.usage.input_tokens + doc.usage.output_tokens;
    expect(spent).toBeGreaterThan(0);
    expect(await monthTokens()).toBe(before + spent);
    await setTokenBudget(null);
  });
});
