/**
 * Knowledge end to end on the memory adapters: uploads, queued ingest, the two
 * tools, and the attacks on them (hostile uploads, a message twice, a crash
 * mid-ingest, a delete racing an ingest, another tenant, a namespace's limits).
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { bagOfWords } from "../../../../test/support/llm-server";
import { makePdf } from "../../../../test/support/pdf";
import { StackVMError } from "../errors";
import type { LlmConfig } from "../llm/config";
import { createLlmSession } from "../llm/session";
import type { EmbeddingPort } from "../ports/embeddings";
import type { LlmPort } from "../ports/llm";
import { silentLog } from "../ports/log";
import { KnowledgeStore } from "../store/knowledge-store";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { MemoryItemStore } from "../testing/memory/memory-item-store";
import { MemoryKnowledgeIndex } from "../testing/memory/memory-knowledge-index";
import { MemoryQueue } from "../testing/memory/memory-queue";
import { MemoryUploads } from "../testing/memory/memory-uploads";
import { testToolContext } from "../testing/tool-context";
import { knowledgeTools } from "../tools/knowledge";
import { createEmbedder } from "./embedder";
import type { KnowledgeIndex } from "./index-port";
import { IngestService } from "./ingest";
import { KnowledgeService } from "./knowledge-service";
import { KnowledgeMemory } from "./memory-add";
import { IngestMessage } from "./model";
import { KnowledgeSearch } from "./search";

const LLM: LlmConfig = {
  models: { default: "m", reason: "m", eval: "m" },
  timeoutMs: 1000,
  maxAttempts: 2,
  repairRounds: 0,
  prices: { "emb-model": { input: 1, output: 0 } },
} as unknown as LlmConfig;

/** Called at each knowledge_graph call, before it answers (a test's look at progress). */
let onGraphCall: (() => Promise<void>) | null = null;

/** Capitalized words (or words in capitals) are entities; each pair in a sentence is related. */
const graphLlm: LlmPort = {
  async complete(request) {
    await onGraphCall?.();
    const text = request.messages.at(-1)?.content.split("\n\n").slice(1).join("\n\n") ?? "";
    const names = [...new Set(text.match(/\b[A-Z](?:[a-z]{2,}|[A-Z]{2,})\b/g) ?? [])].slice(0, 6);
    const answer = {
      entities: names.map((name) => ({ name, description: `${name} as the text describes it` })),
      relationships: names.slice(1).map((name) => ({
        source: names[0]!,
        target: name,
        description: `${names[0]} relates to ${name}`,
      })),
    };
    return { text: JSON.stringify(answer), model: "m", inputTokens: 10, outputTokens: 5 };
  },
};

const embeddingPort: EmbeddingPort = {
  async embed(request) {
    return {
      vectors: request.input.map(bagOfWords),
      model: request.model,
      inputTokens: request.input.length * 3,
    };
  },
};

const MD =
  "# Kyoto\n\nKyoto temples: Kinkakuji is the golden pavilion.\n\n# Osaka\n\nOsaka castle was built by Hideyoshi.";
const HTML =
  "<h1>Rust</h1><p>Rust ownership and the borrow checker prevent data races.</p><script>steal()</script>";
const te = (s: string) => new TextEncoder().encode(s);

/** The index with some methods replaced (a crash, a race), the others passed through. */
function wrap(index: KnowledgeIndex, overrides: Partial<KnowledgeIndex>): KnowledgeIndex {
  return {
    replaceDocument: (...a) => index.replaceDocument(...a),
    deleteDocument: (...a) => index.deleteDocument(...a),
    dropKnowledgeBase: (...a) => index.dropKnowledgeBase(...a),
    search: (...a) => index.search(...a),
    get: (...a) => index.get(...a),
    ...overrides,
  };
}

function setup(index: KnowledgeIndex = new MemoryKnowledgeIndex()) {
  const items = new MemoryItemStore();
  const blobs = new MemoryBlobs();
  const queue = new MemoryQueue();
  const uploads = new MemoryUploads();
  let now = Date.parse("2026-01-01T00:00:00Z");
  const clock = { now: () => now };
  const knowledge = new KnowledgeService({
    knowledge: new KnowledgeStore(items),
    blobs,
    queue,
    clock,
    maxUploadBytes: 100_000,
    uploads,
    maxPresignedBytes: 1_000,
  });
  const embedder = createEmbedder({ port: embeddingPort, model: "emb-model", llm: LLM });
  const ingest = new IngestService({
    knowledge: new KnowledgeStore(items),
    blobs,
    uploads,
    maxPresignedBytes: 1_000,
    clock,
    index,
    embedder,
    llm: () => createLlmSession({ port: graphLlm, config: LLM, budget: {} }),
    log: silentLog,
  });
  /** Runs every queued ingest message once, in order. */
  const drain = async () => {
    const outcomes: string[] = [];
    for (const message of await queue.receive(100)) {
      outcomes.push(await ingest.handle(IngestMessage().parse(JSON.parse(message.body))));
      await queue.delete(message.receiptHandle);
    }
    return outcomes;
  };
  let embeds = 0;
  const countingEmbedder: typeof embedder = {
    ...embedder,
    embed: (texts) => {
      embeds += 1;
      return embedder.embed(texts);
    },
  };
  const search = new KnowledgeSearch({ knowledge, index, embedder: countingEmbedder });
  const memory = new KnowledgeMemory({ knowledge, ingest });
  const [vectorSearch, graph, add] = knowledgeTools({
    chunks: (scope, query, topK) => search.chunks(scope, query, topK),
    graph: (scope, query) => search.graph(scope, query),
    add: (scope, input) => memory.add(scope, input),
  });
  const run = async (
    tool: typeof vectorSearch,
    input: unknown,
    tenant = "t1",
    namespace: Record<string, unknown> = {},
    budget: { tokensLeft?: number } = {},
    idempotencyKey?: string,
  ) => {
    const session = createLlmSession({ port: graphLlm, config: LLM, budget });
    const context = testToolContext({
      tenantId: tenant,
      llm: session,
      namespace,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
    const result = await tool!.run(tool!.input.parse(input), context);
    return { value: result.value as any, calls: session.calls, details: result.details };
  };
  return {
    uploads,
    embeds: () => embeds,
    advance: (ms: number) => {
      now += ms;
    },
    items,
    blobs,
    queue,
    knowledge,
    ingest,
    drain,
    run,
    vectorSearch: vectorSearch!,
    graph: graph!,
    add: add!,
    index,
  };
}

describe("knowledge", () => {
  let k: ReturnType<typeof setup>;
  beforeEach(async () => {
    k = setup();
    await k.knowledge.create("t1", { name: "travel" });
  });

  it("ingests Markdown, HTML and a PDF, and vector_search ranks the right chunk first", async () => {
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    await k.knowledge.upload("t1", "travel", {
      filename: "rust.html",
      contentType: "text/html",
      bytes: te(HTML),
    });
    const pdf = await k.knowledge.upload("t1", "travel", {
      filename: "nara.pdf",
      contentType: "application/pdf",
      bytes: makePdf([["Nara deer roam the park near Todaiji."]]),
    });
    expect(pdf.status).toBe("pending");
    expect(await k.drain()).toEqual(["ready", "ready", "ready"]);
    const listed = await k.knowledge.listDocuments("t1", "travel", null);
    expect(listed.documents.map((d) => [d.filename, d.status])).toEqual(
      expect.arrayContaining([
        ["japan.md", "ready"],
        ["rust.html", "ready"],
        ["nara.pdf", "ready"],
      ]),
    );
    const doc = await k.knowledge.getDocument("t1", "travel", pdf.document_id);
    expect(doc).toMatchObject({ chunks: 1, error: null, progress: { stage: "done" } });
    expect(doc.usage.llm_calls).toBe(2);
    expect(doc.usage.cost_usd).toBeGreaterThan(0);

    const { value, calls } = await k.run(k.vectorSearch, {
      query: "Osaka castle Hideyoshi",
      top_k: 2,
    });
    expect(value[0]).toMatchObject({
      filename: "japan.md",
      position: 1,
      document_id: expect.any(String),
      chunk_id: expect.any(String),
    });
    expect(value[0].text).toContain("Hideyoshi");
    expect(calls).toMatchObject([{ purpose: "embedding", model: "emb-model" }]);
    expect((await k.run(k.vectorSearch, { query: "deer park" })).value[0].filename).toBe(
      "nara.pdf",
    );
    expect((await k.run(k.vectorSearch, { query: "borrow checker" })).value[0].text).not.toContain(
      "steal",
    );
    expect(await k.knowledge.get("t1", "travel")).toMatchObject({ documents: 3, chunks: 4 });
  });

  it("retrieve_knowledge_graph answers the entities near the query, their relationships and source chunks", async () => {
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    await k.drain();
    const { value } = await k.run(k.graph, { query: "Osaka" });
    expect(value.entities.map((e: { name: string }) => e.name)).toEqual(
      expect.arrayContaining(["Osaka", "Hideyoshi"]),
    );
    expect(value.relationships).toContainEqual({
      source: "Osaka",
      target: "Hideyoshi",
      description: "Osaka relates to Hideyoshi",
    });
    expect(value.chunks[0]).toMatchObject({ filename: "japan.md", position: 1 });
  });

  it("shows the graph stage as soon as it starts, before the first chunk's graph", async () => {
    const doc = await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    const seen: unknown[] = [];
    onGraphCall = async () => {
      seen.push((await k.knowledge.getDocument("t1", "travel", doc.document_id)).progress);
    };
    try {
      await k.drain();
    } finally {
      onGraphCall = null;
    }
    expect(seen[0]).toMatchObject({ stage: "graph", done: 0 });
    expect((seen[0] as { total: number }).total).toBeGreaterThan(0);
  });

  it("merges an entity named in several chunks by its normalized name", async () => {
    for (const [filename, text] of [
      ["nara.md", "# Nara\n\nTodaiji holds the Great Buddha of Nara."],
      ["rebuild.md", "# Rebuild\n\nTODAIJI was rebuilt by Chogen."],
    ] as const) {
      await k.knowledge.upload("t1", "travel", {
        filename,
        contentType: "text/markdown",
        bytes: te(text),
      });
    }
    await k.drain();
    const { value } = await k.run(k.graph, { query: "Todaiji" });
    const todaiji = (value.entities as Array<{ name: string; description: string }>).filter(
      (e) => e.name.toLowerCase() === "todaiji",
    );
    expect(todaiji).toHaveLength(1);
    expect(todaiji[0]!.description).toContain("Todaiji as the text describes it");
    expect(todaiji[0]!.description).toContain("TODAIJI as the text describes it");
    expect(value.relationships.map((r: { target: string }) => r.target)).toEqual(
      expect.arrayContaining(["Buddha", "Chogen"]),
    );
  });

  it("checks the branch's budget before a search embeds its query", async () => {
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    await k.drain();
    const before = k.embeds();
    for (const tool of [k.vectorSearch, k.graph]) {
      await expect(k.run(tool, { query: "Osaka" }, "t1", {}, { tokensLeft: 0 })).rejects.toThrow(
        /budget/,
      );
    }
    expect(k.embeds()).toBe(before);
    await k.run(k.vectorSearch, { query: "Osaka" }, "t1", {}, { tokensLeft: 100 });
    expect(k.embeds()).toBe(before + 1);
  });

  it("keeps chunk ids stable when the same content is ingested again", async () => {
    const first = await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
      documentId: "japan",
    });
    await k.drain();
    const before = (await k.run(k.vectorSearch, { query: "Osaka castle" })).value[0].chunk_id;
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
      documentId: first.document_id,
    });
    await k.drain();
    expect((await k.run(k.vectorSearch, { query: "Osaka castle" })).value[0].chunk_id).toBe(before);
  });

  it("does nothing for a message delivered twice", async () => {
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    const [message] = k.queue.sent;
    expect(await k.drain()).toEqual(["ready"]);
    expect(await k.ingest.handle(IngestMessage().parse(message!.body))).toBe("duplicate");
    expect((await k.run(k.vectorSearch, { query: "Osaka", top_k: 10 })).value).toHaveLength(2);
  });

  it("ingests only the newest upload of a replaced document; the older message is stale", async () => {
    const first = await k.knowledge.upload("t1", "travel", {
      filename: "a.md",
      contentType: "text/markdown",
      bytes: te("Old text about Lisbon."),
    });
    await k.knowledge.upload("t1", "travel", {
      filename: "a.md",
      contentType: "text/markdown",
      bytes: te("New text about Porto."),
      documentId: first.document_id,
    });
    expect(await k.drain()).toEqual(["stale", "ready"]);
    const hits = (await k.run(k.vectorSearch, { query: "Lisbon Porto", top_k: 10 })).value;
    expect(hits.map((h: { text: string }) => h.text)).toEqual(["New text about Porto."]);
    expect(k.blobs.keys()).toHaveLength(1);
  });

  it("starts over after a crash mid-ingest and leaves one copy of each row", async () => {
    const memory = new MemoryKnowledgeIndex();
    let crash = true;
    const crashing: KnowledgeIndex = wrap(memory, {
      replaceDocument: async (...args: Parameters<KnowledgeIndex["replaceDocument"]>) => {
        await memory.replaceDocument(...args);
        if (crash) {
          crash = false;
          throw new Error("worker killed after the index write");
        }
      },
    });
    k = setup(crashing);
    await k.knowledge.create("t1", { name: "travel" });
    const doc = await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    const message = IngestMessage().parse(k.queue.sent[0]!.body);
    await expect(k.ingest.handle(message)).rejects.toThrow(/worker killed/);
    expect((await k.knowledge.getDocument("t1", "travel", doc.document_id)).status).toBe(
      "ingesting",
    );
    expect(await k.ingest.handle(message)).toBe("ready");
    expect((await k.run(k.vectorSearch, { query: "Osaka Kyoto", top_k: 10 })).value).toHaveLength(
      2,
    );
  });

  it("records a transient failure as the document's error on the last delivery only", async () => {
    const failing = setup();
    const down: EmbeddingPort = {
      embed: async () =>
        Promise.reject(
          Object.assign(new Error("down"), { kind: "retryable", code: "embedding_server_error" }),
        ),
    };
    const ingest = new IngestService({
      knowledge: new KnowledgeStore(failing.items),
      blobs: failing.blobs,
      clock: { now: () => 0 },
      index: failing.index,
      embedder: createEmbedder({ port: down, model: "e", llm: { ...LLM, maxAttempts: 1 } }),
      llm: () => createLlmSession({ port: graphLlm, config: LLM, budget: {} }),
      log: silentLog,
    });
    await failing.knowledge.create("t1", { name: "kb" });
    const doc = await failing.knowledge.upload("t1", "kb", {
      filename: "a.md",
      contentType: "text/markdown",
      bytes: te("Some text."),
    });
    const message = IngestMessage().parse(failing.queue.sent[0]!.body);
    await expect(ingest.handle(message)).rejects.toThrow("down");
    expect(await ingest.handle(message, true)).toBe("failed");
    expect((await failing.knowledge.getDocument("t1", "kb", doc.document_id)).error).toEqual({
      code: "ingest_failed",
      message: "down",
    });
  });

  it("names the missing embeddings, not a budget, when neither an LLM nor embeddings are configured", async () => {
    const bare = setup();
    const notConfigured = (code: string, message: string) => () =>
      Promise.reject(
        new StackVMError(code === "llm_not_configured" ? "forbidden" : "step", code, message),
      );
    const ingest = new IngestService({
      knowledge: new KnowledgeStore(bare.items),
      blobs: bare.blobs,
      clock: { now: () => 0 },
      index: bare.index,
      embedder: createEmbedder({
        port: {
          embed: notConfigured("embeddings_not_configured", "no embedding server is configured"),
        },
        model: "e",
        llm: LLM,
      }),
      llm: () =>
        createLlmSession({
          port: { complete: notConfigured("llm_not_configured", "no LLM is configured") },
          config: LLM,
          budget: {},
        }),
      log: silentLog,
    });
    await bare.knowledge.create("t1", { name: "kb" });
    const doc = await bare.knowledge.upload("t1", "kb", {
      filename: "a.md",
      contentType: "text/markdown",
      bytes: te("Some text."),
    });
    expect(await ingest.handle(IngestMessage().parse(bare.queue.sent[0]!.body))).toBe("failed");
    const { error } = await bare.knowledge.getDocument("t1", "kb", doc.document_id);
    expect(error).toEqual({
      code: "embeddings_not_configured",
      message: "no embedding server is configured",
    });
  });

  it("refuses an upload at once where no embedding endpoint is configured", async () => {
    const bare = setup();
    const knowledge = new KnowledgeService({
      knowledge: new KnowledgeStore(bare.items),
      blobs: bare.blobs,
      queue: bare.queue,
      clock: { now: () => 0 },
      maxUploadBytes: 1 << 20,
      embeddingsConfigured: false,
    });
    await knowledge.create("t1", { name: "kb" });
    const upload = { filename: "a.md", contentType: "text/markdown", bytes: te("Some text.") };
    await expect(knowledge.upload("t1", "kb", upload)).rejects.toMatchObject({
      code: "embeddings_not_configured",
    });
    expect(bare.queue.sent).toEqual([]);
    expect((await knowledge.listDocuments("t1", "kb", null)).documents).toEqual([]);
  });

  it("fails a corrupt PDF with its reason and still ingests the other documents", async () => {
    const bad = await k.knowledge.upload("t1", "travel", {
      filename: "broken.pdf",
      contentType: "application/pdf",
      bytes: makePdf([["x"]]).subarray(0, 120),
    });
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    expect(await k.drain()).toEqual(["failed", "ready"]);
    const doc = await k.knowledge.getDocument("t1", "travel", bad.document_id);
    expect(doc.status).toBe("failed");
    expect(doc.error?.code).toMatch(/pdf_unreadable|document_empty/);
  });

  it("deletes a document's chunks with it, and an ingest that loses the race removes what it wrote", async () => {
    const doc = await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    await k.drain();
    await k.knowledge.deleteDocument("t1", "travel", doc.document_id);
    expect(await k.drain()).toEqual(["deleted"]);
    expect((await k.run(k.vectorSearch, { query: "Osaka" })).value).toEqual([]);
    expect(k.blobs.keys()).toEqual([]);

    // The delete lands while the ingest runs: after its write it sees the record gone.
    const memory = new MemoryKnowledgeIndex();
    let service: KnowledgeService | undefined;
    const racing: KnowledgeIndex = wrap(memory, {
      replaceDocument: async (...args: Parameters<KnowledgeIndex["replaceDocument"]>) => {
        await service!.deleteDocument(args[0], args[1], args[2]);
        await memory.replaceDocument(...args);
      },
    });
    k = setup(racing);
    service = k.knowledge;
    await k.knowledge.create("t1", { name: "travel" });
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    expect(await k.drain()).toEqual(["deleted"]);
    expect(
      await memory.search("t1", {
        knowledgeBases: ["travel"],
        kind: "chunk",
        vector: bagOfWords("Osaka"),
        topK: 5,
      }),
    ).toEqual([]);
  });

  it("never shows one tenant's chunks to another, under the same knowledge base name", async () => {
    await k.knowledge.upload("t1", "travel", {
      filename: "secret.md",
      contentType: "text/markdown",
      bytes: te("The vault code of Zurich is 4711."),
    });
    await k.knowledge.create("t2", { name: "travel" });
    await k.knowledge.upload("t2", "travel", {
      filename: "public.md",
      contentType: "text/markdown",
      bytes: te("Zurich has a lake."),
    });
    await k.drain();
    const seen = (await k.run(k.vectorSearch, { query: "vault code Zurich", top_k: 50 }, "t2"))
      .value;
    expect(seen.map((h: { filename: string }) => h.filename)).toEqual(["public.md"]);
    await expect(
      k.knowledge.getDocument(
        "t2",
        "travel",
        (await k.knowledge.listDocuments("t1", "travel", null)).documents[0]!.document_id,
      ),
    ).rejects.toMatchObject({ kind: "not_found" });
  });

  it("searches only the knowledge bases the namespace allows", async () => {
    await k.knowledge.create("t1", { name: "private" });
    await k.knowledge.upload("t1", "private", {
      filename: "p.md",
      contentType: "text/markdown",
      bytes: te("Payroll of Berlin office."),
    });
    await k.drain();
    expect(
      (
        await k.run(k.vectorSearch, { query: "payroll Berlin" }, "t1", {
          name: "support",
          knowledge_bases: ["travel"],
        })
      ).value,
    ).toEqual([]);
    expect(
      (await k.run(k.vectorSearch, { query: "payroll Berlin" }, "t1", { name: "support" })).value,
    ).toEqual([]);
    await expect(
      k.run(k.vectorSearch, { query: "payroll", knowledge_base: "private" }, "t1", {
        name: "support",
        knowledge_bases: ["travel"],
      }),
    ).rejects.toMatchObject({
      kind: "step",
      code: "knowledge_base_unavailable",
    });
    expect((await k.run(k.vectorSearch, { query: "payroll Berlin" })).value[0].filename).toBe(
      "p.md",
    );
  });

  describe("refuses hostile uploads with a 4xx that says why, leaving nothing behind", () => {
    it.each([
      [
        "an unsupported type",
        { filename: "x.exe", contentType: "application/x-msdownload", bytes: te("MZ") },
        "unsupported_document_type",
      ],
      [
        "an empty file",
        { filename: "a.md", contentType: "text/markdown", bytes: new Uint8Array(0) },
        "document_empty",
      ],
      [
        "a file over the limit",
        { filename: "a.txt", contentType: "text/plain", bytes: new Uint8Array(100_001) },
        "too_large",
      ],
      [
        "a document id with a path",
        { filename: "a.md", contentType: "text/markdown", bytes: te("x"), documentId: "../../etc" },
        "invalid_document_id",
      ],
      [
        "a file name that is only a path",
        { filename: "../", contentType: "text/markdown", bytes: te("x") },
        "invalid_filename",
      ],
    ])("%s", async (_what, upload, code) => {
      const error = await k.knowledge.upload("t1", "travel", upload).catch((e: unknown) => e);
      expect(error).toMatchObject({ code });
      expect(k.blobs.keys()).toEqual([]);
      expect(k.queue.sent).toEqual([]);
      expect((await k.knowledge.listDocuments("t1", "travel", null)).documents).toEqual([]);
    });

    it("answers 404 for a knowledge base that does not exist or a name that could not be one", async () => {
      for (const kb of ["nope", "../travel", "TRAVEL"]) {
        await expect(
          k.knowledge.upload("t1", kb, {
            filename: "a.md",
            contentType: "text/markdown",
            bytes: te("x"),
          }),
        ).rejects.toMatchObject({ kind: "not_found" });
      }
    });

    it("strips a path from the file name and keeps the upload", async () => {
      const doc = await k.knowledge.upload("t1", "travel", {
        filename: "../../etc/passwd.txt",
        contentType: "text/plain",
        bytes: te("x"),
      });
      expect(doc.filename).toBe("passwd.txt");
    });
  });

  it("deletes a knowledge base with its documents, originals and index table", async () => {
    await k.knowledge.upload("t1", "travel", {
      filename: "japan.md",
      contentType: "text/markdown",
      bytes: te(MD),
    });
    await k.drain();
    await k.knowledge.delete("t1", "travel");
    expect(await k.drain()).toEqual(["deleted"]);
    expect(k.blobs.keys()).toEqual([]);
    expect(
      await k.index.search("t1", {
        knowledgeBases: ["travel"],
        kind: "chunk",
        vector: bagOfWords("Osaka"),
        topK: 5,
      }),
    ).toEqual([]);
    await expect(k.knowledge.get("t1", "travel")).rejects.toMatchObject({ kind: "not_found" });
    await expect(k.knowledge.create("t1", { name: "travel" })).resolves.toMatchObject({
      documents: 0,
    });
  });

  it("refuses a second knowledge base of one name with a conflict", async () => {
    await expect(k.knowledge.create("t1", { name: "travel" })).rejects.toMatchObject({
      code: "knowledge_base_exists",
    });
  });

  describe("presigned uploads", () => {
    it("answers a URL, queues the ingest once when the object has arrived, and ingests it", async () => {
      const { document, upload_url } = await k.knowledge.presign("t1", "travel", {
        filename: "big.md",
        content_type: "text/markdown",
      });
      expect(upload_url).toMatch(/^memory:\/\/uploads\/k\/t1\/travel\/doc_/);
      expect(document).toMatchObject({ status: "pending", size: 0 });
      // Not arrived yet: reads change nothing.
      await k.knowledge.getDocument("t1", "travel", document.document_id);
      expect(k.queue.sent).toEqual([]);
      k.uploads.put(new URL(upload_url).pathname.slice(1).replace(/^uploads\//, ""), te(MD));
      const seen = await k.knowledge.listDocuments("t1", "travel", null);
      expect(seen.documents[0]).toMatchObject({ size: te(MD).byteLength, status: "pending" });
      await k.knowledge.getDocument("t1", "travel", document.document_id);
      expect(k.queue.sent).toHaveLength(1);
      expect(await k.drain()).toEqual(["ready"]);
      expect((await k.run(k.vectorSearch, { query: "Osaka castle" })).value[0].filename).toBe(
        "big.md",
      );
    });

    it("fails an upload bigger than allowed, and one never sent once its URL has expired", async () => {
      const big = await k.knowledge.presign("t1", "travel", {
        filename: "a.txt",
        content_type: "text/plain",
      });
      k.uploads.put(
        new URL(big.upload_url).pathname.slice(1).replace(/^uploads\//, ""),
        new Uint8Array(1_001),
      );
      expect(await k.knowledge.getDocument("t1", "travel", big.document.document_id)).toMatchObject(
        {
          status: "failed",
          error: { code: "too_large" },
        },
      );
      const never = await k.knowledge.presign("t1", "travel", {
        filename: "b.txt",
        content_type: "text/plain",
      });
      k.advance(2 * 3600 * 1000);
      expect(
        await k.knowledge.getDocument("t1", "travel", never.document.document_id),
      ).toMatchObject({
        status: "failed",
        error: { code: "upload_not_received" },
      });
      expect(k.queue.sent).toEqual([]);
    });

    it("fails an upload PUT again bigger after it arrived, reading no more than the limit", async () => {
      const { document, upload_url } = await k.knowledge.presign("t1", "travel", {
        filename: "swap.md",
        content_type: "text/markdown",
      });
      const key = new URL(upload_url).pathname.slice(1).replace(/^uploads\//, "");
      k.uploads.put(key, te(MD));
      await k.knowledge.getDocument("t1", "travel", document.document_id);
      expect(k.queue.sent).toHaveLength(1);
      // The URL still works for its hour: the same key, now 50 times the limit.
      k.uploads.put(key, new Uint8Array(50_000).fill(0x61));
      const read = vi.spyOn(k.uploads, "get");
      expect(await k.drain()).toEqual(["failed"]);
      expect(read).toHaveBeenCalledWith(key, 1_000);
      expect((await read.mock.results[0]!.value)!.byteLength).toBe(1_001);
      expect(await k.knowledge.getDocument("t1", "travel", document.document_id)).toMatchObject({
        status: "failed",
        error: { code: "too_large" },
      });
    });

    it("refuses a type ingestion cannot read, and odd fields, before writing anything", async () => {
      await expect(
        k.knowledge.presign("t1", "travel", {
          filename: "x.exe",
          content_type: "application/x-msdownload",
        }),
      ).rejects.toMatchObject({ code: "unsupported_document_type" });
      await expect(
        k.knowledge.presign("t1", "travel", {
          filename: "a.md",
          content_type: "text/markdown",
          size: 5,
        }),
      ).rejects.toThrow();
      expect((await k.knowledge.listDocuments("t1", "travel", null)).documents).toEqual([]);
    });
  });

  describe("knowledge_add", () => {
    const FACT = "The Osaka office moved to Umeda in March; its door code is 4417.";

    it("writes text that the next task's vector_search finds, the chunks on its result", async () => {
      const added = await k.run(k.add, { text: FACT, title: "Osaka office" });
      expect(added.value).toMatchObject({
        knowledge_base: "travel",
        document_id: expect.stringMatching(/^mem_[0-9a-f]{32}$/),
        chunks: [{ position: 0, text: FACT, chunk_id: expect.any(String) }],
      });
      expect(added.details).toMatchObject({
        knowledge_add: { created: true, filename: "osaka-office.md", usage: { llm_calls: 2 } },
      });
      // Ingested in the step, not queued: nothing is left for the queue.
      expect(await k.drain()).toEqual([]);
      const found = await k.run(
        k.vectorSearch,
        { query: "Osaka office door code", top_k: 1 },
        "t1",
        {},
        {},
        "idem-task2-main-c0",
      );
      expect(found.value[0]).toMatchObject({
        chunk_id: added.value.chunks[0].chunk_id,
        text: FACT,
        filename: "osaka-office.md",
      });
    });

    it("answers the document it wrote when a step is delivered twice, and adds nothing", async () => {
      const first = await k.run(k.add, { text: FACT });
      const again = await k.run(k.add, { text: FACT });
      expect(again.value).toEqual(first.value);
      expect(again.details).toMatchObject({ knowledge_add: { created: false } });
      const listed = await k.knowledge.listDocuments("t1", "travel", null);
      expect(listed.documents).toHaveLength(1);
      const hits = await k.run(k.vectorSearch, { query: "Osaka door code", top_k: 10 });
      expect(hits.value.filter((h: { text: string }) => h.text === FACT)).toHaveLength(1);
    });

    it("writes one document when two copies of a step run side by side", async () => {
      const [one, two] = await Promise.all([
        k.run(k.add, { text: FACT }),
        k.run(k.add, { text: FACT }),
      ]);
      expect(two.value.document_id).toBe(one.value.document_id);
      expect(two.value.chunks).toEqual(one.value.chunks);
      expect((await k.knowledge.listDocuments("t1", "travel", null)).documents).toHaveLength(1);
      const hits = await k.run(k.vectorSearch, { query: "Osaka door code", top_k: 10 });
      expect(hits.value.filter((h: { text: string }) => h.text === FACT)).toHaveLength(1);
    });

    it("refuses other text under the document id of a step that already wrote one", async () => {
      await k.run(k.add, { text: FACT });
      await expect(k.run(k.add, { text: "Something else." })).rejects.toMatchObject({
        kind: "step",
        code: "memory_id_reused",
      });
    });

    it("ingests again a memory a crash left pending, and leaves one copy of its rows", async () => {
      const real = new MemoryKnowledgeIndex();
      let crash = true;
      k = setup(
        wrap(real, {
          replaceDocument: async (...a) => {
            if (crash) {
              crash = false;
              throw new Error("the function was killed mid-write");
            }
            return real.replaceDocument(...a);
          },
        }),
      );
      await k.knowledge.create("t1", { name: "travel" });
      await expect(k.run(k.add, { text: FACT })).rejects.toThrow(/killed/);
      const [left] = (await k.knowledge.listDocuments("t1", "travel", null)).documents;
      expect(left?.status).toMatch(/pending|ingesting/);
      const retried = await k.run(k.add, { text: FACT });
      expect(retried.details).toMatchObject({ knowledge_add: { created: false } });
      expect(
        await k.knowledge.getDocument("t1", "travel", retried.value.document_id),
      ).toMatchObject({ status: "ready", chunks: 1 });
    });

    it("writes only to a knowledge base the namespace allows, and asks which when it allows several", async () => {
      await k.knowledge.create("t1", { name: "private" });
      await expect(
        k.run(k.add, { text: FACT, knowledge_base: "private" }, "t1", {
          name: "support",
          knowledge_bases: ["travel"],
        }),
      ).rejects.toMatchObject({ kind: "step", code: "knowledge_base_unavailable" });
      await expect(k.run(k.add, { text: FACT })).rejects.toMatchObject({
        code: "knowledge_base_required",
        message: expect.stringContaining("private, travel"),
      });
      await expect(k.run(k.add, { text: FACT }, "t1", { name: "support" })).rejects.toMatchObject({
        code: "knowledge_base_required",
        message: expect.stringContaining("allows no knowledge base"),
      });
      const written = await k.run(k.add, { text: FACT }, "t1", {
        name: "support",
        knowledge_bases: ["travel"],
      });
      expect(written.value.knowledge_base).toBe("travel");
      expect((await k.knowledge.listDocuments("t1", "private", null)).documents).toEqual([]);
    });

    it("never writes to another tenant's knowledge base of the same name", async () => {
      await expect(
        k.run(k.add, { text: FACT, knowledge_base: "travel" }, "t2"),
      ).rejects.toMatchObject({ code: "knowledge_base_unavailable" });
      await k.knowledge.create("t2", { name: "travel" });
      await k.run(k.add, { text: FACT }, "t2");
      expect((await k.knowledge.listDocuments("t1", "travel", null)).documents).toEqual([]);
      expect((await k.run(k.vectorSearch, { query: "Osaka door code" })).value).toEqual([]);
    });

    it("refuses empty, oversized or wrongly typed text before writing anything", () => {
      expect(() => k.add.input.parse({ text: "   " })).toThrow(/must not be empty/);
      expect(() => k.add.input.parse({ text: "x".repeat(100_001) })).toThrow(/add it in parts/);
      expect(() => k.add.input.parse({ text: 42 })).toThrow();
      expect(() => k.add.input.parse({ text: "hi", chunk: 1 })).toThrow();
    });

    it("spends from the tenant's month as an upload does: a spent month adds nothing", async () => {
      const store = new KnowledgeStore(new MemoryItemStore());
      const blobs = new MemoryBlobs();
      const clock = { now: () => Date.parse("2026-01-01T00:00:00Z") };
      const knowledge = new KnowledgeService({
        knowledge: store,
        blobs,
        queue: new MemoryQueue(),
        clock,
        maxUploadBytes: 100_000,
      });
      const ingest = new IngestService({
        knowledge: store,
        blobs,
        clock,
        index: new MemoryKnowledgeIndex(),
        embedder: createEmbedder({ port: embeddingPort, model: "emb-model", llm: LLM }),
        llm: () => createLlmSession({ port: graphLlm, config: LLM, budget: {} }),
        budget: {
          left: async () => {
            throw new StackVMError("rate_limited", "monthly_budget_exhausted", "spent");
          },
          record: async () => {},
        },
        log: silentLog,
      });
      await knowledge.create("t1", { name: "notes" });
      const memory = new KnowledgeMemory({ knowledge, ingest });
      await expect(
        memory.add(
          { tenant: "t1", namespace: { name: "default" } },
          { text: FACT, documentId: "mem_1" },
        ),
      ).rejects.toMatchObject({ kind: "step", code: "budget_exceeded" });
      expect((await knowledge.getDocument("t1", "notes", "mem_1")).status).toBe("failed");
    });
  });
});
