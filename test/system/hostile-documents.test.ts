/**
 * Issue 30, finding 2: documents built to hold the shared process. One tenant
 * uploads a text of 100,000 spaces and an `x` (a quadratic cleaning expression
 * took 39 s on it), an HTML of 80,000 `<` (7 s), and a 300 KB PDF whose 2,000
 * pages share one 2 MB compressed stream (2.7 GB held, and more on every
 * redelivery). While they ingest, another tenant's API answers promptly; the
 * process's memory stays near where it was; the PDF fails, once, with the cause.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settledDocuments, uploadDocument } from "../support/knowledge";
import { makeSharedStreamPdf } from "../support/pdf";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let other: string;

beforeAll(async () => {
  // A 10 s cap on reading one PDF keeps the test short; the caps' defaults are tested in core.
  t = await startTestStack({
    env: { EMBEDDING_MODEL: "scripted-embedding", STACKVM_KNOWLEDGE_PDF_SECONDS: "10" },
  });
  t.llm.on("knowledge_graph", () => ({ entities: [], relationships: [] }));
  other = (
    await t.api("POST", "/v1/admin/tenants/bystander/keys", { name: "b" }, { key: ADMIN_KEY })
  ).body.key;
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

describe("hostile documents", () => {
  it("ingest without stalling another tenant or growing the process; the PDF fails once, with its cause", async () => {
    expect((await t.api("POST", "/v1/knowledge-bases", { name: "hostile" })).status).toBe(201);
    const rssBefore = process.memoryUsage.rss();
    const uploads = [
      { name: "spaces.txt", type: "text/plain", bytes: `${" ".repeat(100_000)}x` },
      { name: "angles.html", type: "text/html", bytes: "<".repeat(80_000) },
      {
        name: "shared.pdf",
        type: "application/pdf",
        bytes: makeSharedStreamPdf(2_000, 2 * 1024 * 1024),
      },
    ];
    const started = performance.now();
    for (const file of uploads) {
      expect((await uploadDocument(t, "hostile", file)).status).toBe(202);
    }

    // The bystander's reads while the three ingest: none waits behind them.
    let slowest = 0;
    let peakRss = process.memoryUsage.rss();
    let documents: any[] = [];
    for (let i = 0; i < 2_000; i++) {
      const started = performance.now();
      const answer = await t.api("GET", "/v1/tasks", undefined, { key: other });
      slowest = Math.max(slowest, performance.now() - started);
      expect(answer.status).toBe(200);
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
      documents = (await t.api("GET", "/v1/knowledge-bases/hostile/documents")).body.documents;
      if (documents.every((d) => d.status === "ready" || d.status === "failed")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(
      `hostile documents settled in ${Math.round(performance.now() - started)} ms; slowest bystander read ${Math.round(slowest)} ms; peak RSS +${Math.round((peakRss - rssBefore) / 2 ** 20)} MiB`,
    );
    const byName = Object.fromEntries(documents.map((d) => [d.filename, d]));
    expect(byName["spaces.txt"]).toMatchObject({ status: "ready" });
    expect(byName["angles.html"]).toMatchObject({ status: "ready" });
    expect(byName["shared.pdf"]).toMatchObject({ status: "failed" });
    expect(byName["shared.pdf"].error.code).toMatch(
      /^(document_too_long|pdf_too_large|pdf_too_slow)$/,
    );
    expect(byName["shared.pdf"].error.message).toMatch(/split it/);
    // Generous for a loaded machine: before, the text alone held the API 39 s.
    expect(slowest).toBeLessThan(5_000);
    // Before, the PDF alone took the process from 2.6 to 5.3 GB.
    expect((peakRss - rssBefore) / 2 ** 20).toBeLessThan(400);

    // Once: the failure is the document's state, and another delivery changes nothing.
    const failedAt = byName["shared.pdf"].updated_at;
    await new Promise((r) => setTimeout(r, 1_000));
    const again = await t.api(
      "GET",
      `/v1/knowledge-bases/hostile/documents/${byName["shared.pdf"].document_id}`,
    );
    expect(again.body).toMatchObject({ status: "failed", updated_at: failedAt });
    await settledDocuments(t, "hostile");
  }, 240_000);

  it("takes a presigned PUT over the S3 emulator's former 11 MiB body limit, as S3 does up to 100 MiB", async () => {
    const asked = await t.api("POST", "/v1/knowledge-bases/hostile/documents", {
      filename: "big.txt",
      content_type: "text/plain",
    });
    expect(asked.status).toBe(201);
    const bytes = 12 * 1024 * 1024;
    const put = await fetch(asked.body.upload_url, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "word ".repeat(bytes / 4).slice(0, bytes),
    });
    expect(put.status).toBe(200);
    const id = asked.body.document.document_id;
    let document: any = null;
    for (let i = 0; i < 600; i++) {
      document = (await t.api("GET", `/v1/knowledge-bases/hostile/documents/${id}`)).body;
      if (document.status === "ready" || document.status === "failed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Arrived whole; then too long to index as one document, which says so.
    expect(document).toMatchObject({ size: bytes, status: "failed" });
    expect(document.error.code).toBe("document_too_long");
  }, 120_000);
});
