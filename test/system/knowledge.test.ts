/**
 * Knowledge through the whole local stack, as an integrator drives it: upload
 * three documents (one a PDF) and a corrupt PDF over multipart, wait for the
 * queued ingest (LanceDB on the S3 emulator, embeddings from the scripted
 * server's hashed bag of words), run a plan of the original StackVM's shape
 * (`vector_search`, `retrieve_knowledge_graph`, `llm_generate` over both) and
 * check that the answer cites the right document; delete a document and see it
 * gone; a second tenant never sees the first tenant's chunks; hostile uploads
 * get a 4xx and leave nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantKey } from "../support/attacker";
import { settledDocuments, uploadDocument } from "../support/knowledge";
import type { RecordedRequest } from "../support/llm-server";
import { makePdf } from "../support/pdf";
import { startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let other: string;

const DOCS = {
  "kyoto.md": [
    "text/markdown",
    "# Kyoto\n\nKyoto temples: Kinkakuji is the golden pavilion of Kyoto.\n\n# Gion\n\nGion is the geisha district of Kyoto.",
  ],
  "osaka.html": [
    "text/html",
    "<h1>Osaka</h1><p>Osaka castle was built by Hideyoshi in 1583.</p><script>evil()</script>",
  ],
} as const;
const NARA_PDF = makePdf([
  ["Nara deer roam the park near Todaiji temple."],
  ["Todaiji holds a great bronze Buddha."],
]);

/** A multipart upload with the stack's key (or `key`). */
const upload = (
  kb: string,
  name: string,
  type: string,
  bytes: Uint8Array | string,
  extra: Record<string, string> = {},
  key?: string,
) => uploadDocument(t, kb, { name, type, bytes }, { extra, ...(key ? { key } : {}) });

/** Polls the knowledge base until no document is pending or ingesting. */
const settled = (kb: string, key?: string) => settledDocuments(t, kb, key);

/** The scripted graph: capitalized words are entities, the first related to the others. */
function graphAnswer(request: RecordedRequest) {
  const text = request.messages.at(-1)?.content.split("\n\n").slice(1).join("\n\n") ?? "";
  const names = [...new Set(text.match(/\b[A-Z][a-z]{2,}\b/g) ?? [])].slice(0, 6);
  return {
    entities: names.map((name) => ({ name, description: `${name}, as the document tells` })),
    relationships: names.slice(1).map((name) => ({
      source: names[0],
      target: name,
      description: `${names[0]} is linked to ${name}`,
    })),
  };
}

const search = (query: string, top_k = 3) => ({
  seq_no: 0,
  type: "calling",
  parameters: {
    tool_name: "vector_search",
    tool_params: { query, top_k },
    output_vars: ["chunks"],
  },
});

async function runPlan(plan: unknown[], key?: string) {
  const started = await t.api("POST", "/v1/tasks", { plan }, { key: key ?? t.apiKey });
  expect(started.status).toBe(202);
  return t.waitForTask(started.body.task_id, { key: key ?? t.apiKey });
}

beforeAll(async () => {
  t = await startTestStack({ env: { EMBEDDING_MODEL: "scripted-embedding" } });
  t.llm.on("knowledge_graph", graphAnswer);
  // The answer cites the first chunk id of its context, with that chunk's file name.
  t.llm.on("text", (request) => {
    const content = request.messages.map((m) => m.content).join("\n");
    const id = content.match(/"chunk_id": "([^"]+)"/)?.[1] ?? "none";
    const file = content.match(/"filename": "([^"]+)"/)?.[1] ?? "none";
    return `Deer roam Nara park, by Todaiji [${id}] (${file}).`;
  });
  other = await tenantKey(t, "intruder", "b");
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

describe("knowledge through the local stack", () => {
  let documents: any[];

  it("ingests Markdown, HTML and a PDF; a corrupt PDF fails alone with its reason", async () => {
    expect(
      (await t.api("POST", "/v1/knowledge-bases", { name: "travel", description: "Japan" })).status,
    ).toBe(201);
    for (const [name, [type, text]] of Object.entries(DOCS)) {
      const answer = await upload("travel", name, type, text);
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({ filename: name, status: "pending", content_type: type });
    }
    expect((await upload("travel", "nara.pdf", "application/pdf", NARA_PDF)).status).toBe(202);
    const corrupt = await upload(
      "travel",
      "broken.pdf",
      "application/pdf",
      NARA_PDF.subarray(0, 150),
    );
    expect(corrupt.status).toBe(202);

    documents = await settled("travel");
    const byName = Object.fromEntries(documents.map((d) => [d.filename, d]));
    for (const name of ["kyoto.md", "osaka.html", "nara.pdf"]) {
      expect(byName[name]).toMatchObject({
        status: "ready",
        error: null,
        progress: { stage: "done" },
      });
      expect(byName[name].chunks).toBeGreaterThan(0);
      expect(byName[name].usage.embedding_tokens).toBeGreaterThan(0);
    }
    expect(byName["broken.pdf"]).toMatchObject({ status: "failed", chunks: 0 });
    expect(byName["broken.pdf"].error.code).toMatch(/pdf_unreadable|document_empty/);
    expect(byName["broken.pdf"].error.message).toMatch(/PDF/);
    const kb = await t.api("GET", "/v1/knowledge-bases/travel");
    expect(kb.body).toMatchObject({ name: "travel", documents: 4 });
  });

  it("runs a plan of the original's shape and the answer cites the right document", async () => {
    const task = await runPlan([
      search("Where do deer roam near Todaiji?"),
      {
        seq_no: 1,
        type: "calling",
        parameters: {
          tool_name: "retrieve_knowledge_graph",
          tool_params: { query: "Todaiji" },
          output_vars: ["kg"],
        },
      },
      {
        seq_no: 2,
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: {
            prompt: "Where do deer roam? Cite the chunk_id you use.",
            context: { chunks: "${chunks}", graph: "${kg}" },
          },
          output_vars: ["answer"],
        },
      },
      { seq_no: 3, type: "assign", parameters: { final_answer: "${answer}" } },
    ]);
    expect(task.status).toBe("completed");
    const nara = documents.find((d) => d.filename === "nara.pdf");
    expect(task.final_answer).toContain("(nara.pdf)");
    expect(task.final_answer).toMatch(new RegExp(`\\[${nara.document_id}:`));

    const commits = (await t.api("GET", `/v1/tasks/${task.task_id}/branches/main/commits`)).body
      .commits;
    const searchStep = commits.find(
      (c: any) =>
        c.instruction?.parameters?.tool_name === "vector_search" ||
        JSON.stringify(c).includes('"vector_search"'),
    );
    expect(JSON.stringify(searchStep)).toContain('"purpose":"embedding"');
    const graphStep = commits.find(
      (c: any) =>
        JSON.stringify(c).includes('"retrieve_knowledge_graph"') &&
        JSON.stringify(c).includes("relationships"),
    );
    expect(JSON.stringify(graphStep)).toMatch(/Todaiji/);
  });

  it("lists vector_search and retrieve_knowledge_graph among the tools", async () => {
    const names = (await t.api("GET", "/v1/tools")).body.tools.map((tool: any) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["vector_search", "retrieve_knowledge_graph"]));
  });

  it("never returns the first tenant's chunks to a second tenant", async () => {
    expect(
      (await t.api("POST", "/v1/knowledge-bases", { name: "travel" }, { key: other })).status,
    ).toBe(201);
    expect(
      (
        await upload(
          "travel",
          "own.md",
          "text/markdown",
          "Lisbon trams climb the hills.",
          {},
          other,
        )
      ).status,
    ).toBe(202);
    await settled("travel", other);
    const task = await runPlan(
      [
        search("deer Todaiji Nara Kyoto Osaka Lisbon", 50),
        { seq_no: 1, type: "assign", parameters: { final_answer: "${chunks}" } },
      ],
      other,
    );
    expect(task.status).toBe("completed");
    expect(task.final_answer.map((c: any) => c.filename)).toEqual(["own.md"]);
    const nara = documents.find((d) => d.filename === "nara.pdf");
    expect(
      (
        await t.api("GET", `/v1/knowledge-bases/travel/documents/${nara.document_id}`, undefined, {
          key: other,
        })
      ).status,
    ).toBe(404);
  });

  it("refuses hostile uploads with a 4xx that says why, and leaves nothing behind", async () => {
    const before = (await t.api("GET", "/v1/knowledge-bases/travel/documents")).body.documents
      .length;
    const exe = await upload("travel", "tool.exe", "application/x-msdownload", "MZ\u0000\u0000");
    expect(exe.status).toBe(422);
    expect(exe.body.error.message).toMatch(/text\/plain/);
    expect((await upload("travel", "empty.md", "text/markdown", "")).status).toBe(422);
    expect(
      (await upload("travel", "a.md", "text/markdown", "x", { document_id: "../../x" })).status,
    ).toBe(422);
    expect((await upload("nope", "a.md", "text/markdown", "x")).status).toBe(404);
    const json = await t.api("POST", "/v1/knowledge-bases/travel/documents", { not: "multipart" });
    expect(json.status).toBe(400);
    // JSON asks for a presigned URL, and names the fields it needs.
    expect(json.body.error.message).toMatch(/filename/);
    const text = await fetch(`${t.url}/v1/knowledge-bases/travel/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "text/plain" },
      body: "just text",
    });
    expect(text.status).toBe(400);
    expect(((await text.json()) as any).error.message).toMatch(/multipart/);
    const huge = await upload("travel", "huge.txt", "text/plain", "x".repeat(6 << 20));
    expect(huge.status).toBe(413);
    expect((await t.api("POST", "/v1/knowledge-bases", { name: "Bad Name" })).status).toBe(400);
    expect(
      (await t.api("GET", "/v1/knowledge-bases/travel/documents")).body.documents,
    ).toHaveLength(before);
  });

  it("takes a large document by presigned URL straight to S3, and ingests it after the PUT", async () => {
    const asked = await t.api("POST", "/v1/knowledge-bases/travel/documents", {
      filename: "hokkaido.md",
      content_type: "text/markdown",
    });
    expect(asked.status).toBe(201);
    expect(asked.body.document).toMatchObject({ status: "pending", filename: "hokkaido.md" });
    const put = await fetch(asked.body.upload_url, {
      method: "PUT",
      headers: { "content-type": "text/markdown" },
      body: "# Hokkaido\n\nSapporo snow festival sculptures of ice.",
    });
    expect(put.status).toBe(200);
    const id = asked.body.document.document_id;
    // The first read after the PUT sees the object and queues the ingest.
    const byId = async () =>
      (await t.api("GET", `/v1/knowledge-bases/travel/documents/${id}`)).body;
    let document = await byId();
    for (let i = 0; i < 600 && document.status !== "ready" && document.status !== "failed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      document = await byId();
    }
    expect(document).toMatchObject({ status: "ready", error: null });
    const task = await runPlan([
      search("Sapporo snow festival", 1),
      { seq_no: 1, type: "assign", parameters: { final_answer: "${chunks}" } },
    ]);
    expect(task.final_answer[0]).toMatchObject({ filename: "hokkaido.md", document_id: id });
    const refused = await t.api("POST", "/v1/knowledge-bases/travel/documents", {
      filename: "x.exe",
      content_type: "application/x-msdownload",
    });
    expect(refused.status).toBe(422);
  });

  it("deletes a document, and its chunks leave the results", async () => {
    const nara = documents.find((d) => d.filename === "nara.pdf");
    expect(
      (await t.api("DELETE", `/v1/knowledge-bases/travel/documents/${nara.document_id}`)).status,
    ).toBe(204);
    expect(
      (await t.api("GET", `/v1/knowledge-bases/travel/documents/${nara.document_id}`)).status,
    ).toBe(404);
    // The rows go in the knowledge base's message group: search until they have.
    let files: string[] = ["nara.pdf"];
    for (let i = 0; i < 50 && files.includes("nara.pdf"); i++) {
      const task = await runPlan([
        search("deer Todaiji Buddha", 10),
        { seq_no: 1, type: "assign", parameters: { final_answer: "${chunks}" } },
      ]);
      files = task.final_answer.map((c: any) => c.filename);
    }
    expect(files).not.toContain("nara.pdf");
    expect(files.length).toBeGreaterThan(0);
  });
});
