// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
/**
 * The console's views of tools and knowledge in Debian's Chromium against the
 * whole local stack: a namespace's tools grouped by source (built-in, code
 * tools, each MCP server, HTTP tools), the knowledge bases with each document's
 * ingest status and error, and a step's cited chunk shown with its document and
 * position. Each test leaves a screenshot in test/screenshots/.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { settledDocuments, uploadDocument } from "../support/knowledge";
import { type EverythingServer, startEverything } from "../support/mcp-server";
import { makePdf } from "../support/pdf";
import { startTestStack, type TestStack } from "../support/stack";
import { launchBrowser, requireChromium, type TestBrowser } from "./browser";

let stack: TestStack;
let browser: TestBrowser;
let mcp: EverythingServer;
const pages: Page[] = [];

beforeAll(async () => {
  requireChromium();
  [stack, browser, mcp] = await Promise.all([
    startTestStack({ env: { EMBEDDING_MODEL: "scripted-embedding" } }),
    launchBrowser(),
    startEverything(),
  ]);
  stack.llm.on("knowledge_graph", { entities: [], relationships: [] });
  // The answer cites the first chunk of its context by id.
  stack.llm.on("text", (request) => {
    const content = request.messages.map((m) => m.content).join("\n");
    const id = content.match(/"chunk_id":\s*"([^"]+)"/)?.[1] ?? "none";
    return `Deer roam Nara park [${id}].`;
  });
});

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await mcp?.stop();
});

async function open(path: string): Promise<Page> {
  const page = await browser.page({ key: stack.apiKey });
  pages.push(page);
  await page.goto(`${stack.url}${path}`);
  return page;
}

async function ok(method: string, path: string, body: unknown, status: number) {
  const answer = await stack.api(method, path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body;
}

describe("the console's tools and knowledge", () => {
  it("lists a namespace's tools grouped by source: built-in, code, each MCP server, HTTP", async () => {
    await ok(
      "PUT",
      "/v1/namespaces/sources",
      { allowed_tools: ["llm_generate", "http_request"], allowed_hosts: ["127.0.0.1"] },
      200,
    );
    await ok(
      "POST",
      "/v1/namespaces/sources/tools",
      {
        name: "double",
        description: "Doubles n",
        input_schema: { type: "object", properties: { n: { type: "number" } } },
        language: "javascript",
        code: "inputs.n * 2",
      },
      201,
    );
    await ok(
      "POST",
      "/v1/namespaces/sources/http-tools",
      {
        name: "crm_lookup",
        description: "Finds a customer",
        url: "http://127.0.0.1:9/lookup",
        input_schema: { type: "object" },
      },
      201,
    );
    await ok(
      "POST",
      "/v1/namespaces/sources/mcp-servers",
      { name: "every", url: mcp.url, tools: ["echo", "get-sum"] },
      201,
    );

    const page = await open("/ui/namespaces");
    const row = page.locator('tr[data-namespace="sources"]');
    await row.getByText("Tools by source").click();
    const group = (key: string) => row.locator(`.tool-sources [data-source="${key}"]`);
    await group("mcp:every").waitFor();
    const titles = await row.locator(".tool-sources strong").allTextContents();
    expect(titles).toEqual(["Built-in", "Code tools", "MCP server every", "HTTP tools"]);
    expect(await group("code").locator("code").allTextContents()).toEqual(["double"]);
    expect(await group("mcp:every").locator("code").allTextContents()).toEqual([
      "every.echo",
      "every.get-sum",
    ]);
    expect(await group("http").locator("code").allTextContents()).toEqual(["crm_lookup"]);
    expect(await group("builtin").locator("code").allTextContents()).toContain("llm_generate");
    await browser.screenshot(page, "20-tools-by-source");
  });

  it("shows an MCP tool call's input and output in its commit", async () => {
    // The "sources" namespace and its server come from the test above.
    const created = await ok(
      "POST",
      "/v1/tasks",
      {
        namespace: "sources",
        plan: [
          {
            seq_no: 0,
            type: "calling",
            parameters: {
              tool_name: "every.get-sum",
              tool_params: { a: 19, b: 23 },
              output_vars: ["sum"],
            },
          },
          { seq_no: 1, type: "assign", parameters: { final_answer: "${sum}" } },
        ],
      },
      202,
    );
    const task = await stack.waitForTask(created.task_id);
    expect(task.status).toBe("completed");

    const page = await open(`/ui/tasks/${created.task_id}`);
    await page.locator(".commit-row", { hasText: "#0 calling" }).click();
    const panel = page.locator(".commit-panel");
    await panel.getByRole("heading", { name: /#0 calling/ }).waitFor();
    const section = (title: string) =>
      panel.locator(".commit-section", { has: page.getByRole("heading", { name: title }) });
    const instruction = await section("Instruction, as written").textContent();
    expect(instruction).toContain("every.get-sum");
    const inputs = await section("Inputs, references resolved").textContent();
    expect(inputs).toMatch(/19/);
    expect(inputs).toMatch(/23/);
    const outputs = await section("Outputs").textContent();
    expect(outputs).toContain("sum");
    expect(outputs).toContain("42");
    await browser.screenshot(page, "21-mcp-call");
  });

  it("shows each knowledge base's documents with their status, chunks and error", async () => {
    await ok("POST", "/v1/knowledge-bases", { name: "travel", description: "Japan" }, 201);
    const nara = makePdf([["Nara deer roam the park near Todaiji temple."]]);
    for (const file of [
      { name: "nara.pdf", type: "application/pdf", bytes: nara },
      { name: "broken.pdf", type: "application/pdf", bytes: nara.subarray(0, 150) },
    ]) {
      expect((await uploadDocument(stack, "travel", file)).status).toBe(202);
    }
    const documents = await settledDocuments(stack, "travel");
    const broken = documents.find((d) => d.filename === "broken.pdf");

    const page = await open("/ui/knowledge");
    const kb = page.locator('[data-knowledge-base="travel"]');
    await kb.getByRole("heading", { name: "travel" }).waitFor();
    expect(await kb.textContent()).toContain("2 documents");
    const ready = kb.locator("tr", { hasText: "nara.pdf" });
    await ready.waitFor();
    expect(await ready.textContent()).toMatch(/ready.*1 chunks/);
    const failed = kb.locator("tr", { hasText: "broken.pdf" });
    expect(await failed.textContent()).toContain("failed");
    expect(await failed.getByRole("note").textContent()).toBe(
      `${broken.error.code}: ${broken.error.message}`,
    );
    await browser.screenshot(page, "21-knowledge-documents");
  });

  it("shows the document and position of the chunk a step's answer cites", async () => {
    const created = await ok(
      "POST",
      "/v1/tasks",
      {
        plan: [
          {
            seq_no: 0,
            type: "calling",
            parameters: {
              tool_name: "vector_search",
              tool_params: { query: "Where do deer roam?", top_k: 1 },
              output_vars: ["chunks"],
            },
          },
          {
            seq_no: 1,
            type: "calling",
            parameters: {
              tool_name: "llm_generate",
              tool_params: { prompt: "Answer and cite: ${chunks}" },
              output_vars: ["answer"],
            },
          },
          { seq_no: 2, type: "assign", parameters: { final_answer: "${answer}" } },
        ],
      },
      202,
    );
    const task = await stack.waitForTask(created.task_id);
    expect(task.status).toBe("completed");
    const commits = (
      await ok("GET", `/v1/tasks/${task.task_id}/branches/main/commits`, undefined, 200)
    ).commits as Array<{ commit_id: string; seq_no: number; type: string }>;
    const answer = commits.find((c) => c.type === "step" && c.seq_no === 1)!;

    const page = await open(`/ui/tasks/${task.task_id}?commit=${answer.commit_id}`);
    const cited = page.locator(".commit-panel .cited-sources li");
    await cited.first().waitFor();
    expect(await cited.count()).toBe(1);
    expect(await cited.first().textContent()).toMatch(/^nara\.pdf, position 0 /);
    expect(task.final_answer).toContain(String(await cited.first().getAttribute("data-chunk")));
    await browser.screenshot(page, "22-cited-source");
  });
});
