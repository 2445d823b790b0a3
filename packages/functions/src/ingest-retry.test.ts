/**
 * Ingest against a failing server, through the real OpenAI adapters and the
 * scripted server: a delivery that failed at the embeddings (a 503) is tried
 * again without asking the LLM again for the graphs it already had, and the
 * document's usage counts each call once; an embeddings 501 ("start it with
 * --embeddings") is permanent: asked once, the document fails at once with the
 * server's words.
 */
import { IngestMessage, LlmConfig, silentLog } from "@stackvm/core";
import {
  MemoryBlobs,
  MemoryItemStore,
  MemoryKnowledgeIndex,
  MemoryQueue,
} from "@stackvm/core/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../../../test/support/llm-server";
import { OpenAiEmbeddings } from "../../aws/src/openai-embeddings";
import { OpenAiLlm } from "../../aws/src/openai-llm";
import { createKnowledge } from "./knowledge";

let server: ScriptedLlm;
beforeAll(async () => {
  server = await startScriptedLlm();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const GRAPH = {
  entities: [{ name: "Kyoto", description: "a city" }],
  relationships: [],
};

function setup(maxAttempts = 1) {
  const queue = new MemoryQueue();
  const knowledge = createKnowledge(
    {
      items: new MemoryItemStore(),
      blobs: new MemoryBlobs(),
      queue,
      clock: { now: Date.now },
      llm: new OpenAiLlm({ apiKey: "sk-test", baseURL: server.url }),
      index: new MemoryKnowledgeIndex(),
      embeddings: new OpenAiEmbeddings({ apiKey: "sk-test", baseURL: server.url }),
    },
    LlmConfig.parse({ models: { default: "m", reason: "m", eval: "m" }, maxAttempts }),
    { embeddingModel: "nomic-embed-text", maxUploadBytes: 100_000 },
    silentLog,
  );
  return { ...knowledge, queue };
}

async function upload(k: ReturnType<typeof setup>) {
  await k.service.create("t1", { name: "kb" });
  const doc = await k.service.upload("t1", "kb", {
    filename: "kyoto.md",
    contentType: "text/markdown",
    bytes: new TextEncoder().encode("# Kyoto\n\nKyoto has many temples and gardens."),
  });
  return { doc, message: IngestMessage().parse(k.queue.sent[0]!.body) };
}

describe("ingest against a failing server", () => {
  it("does not ask again for the graphs a failed delivery had, and counts each call once", async () => {
    server.on("knowledge_graph", GRAPH);
    server.queue("embeddings", { fault: "status", status: 503, message: "loading model" });
    const k = setup();
    const { doc, message } = await upload(k);
    await expect(k.ingest.handle(message)).rejects.toMatchObject({
      code: "embedding_server_error",
    });
    const graphCalls = server.requests.filter((r) => r.schemaName === "knowledge_graph").length;
    expect(graphCalls).toBeGreaterThan(0);
    expect(await k.ingest.handle(message)).toBe("ready");
    expect(server.requests.filter((r) => r.schemaName === "knowledge_graph")).toHaveLength(
      graphCalls,
    );
    const ready = await k.service.getDocument("t1", "kb", doc.document_id);
    // The graph calls of the first delivery, and the embedding call of the second.
    expect(ready.usage.llm_calls).toBe(graphCalls + 1);
  });

  it("fails the document at once on an embeddings 501, asked once, quoting the server", async () => {
    server.on("knowledge_graph", GRAPH);
    server.queue("embeddings", {
      fault: "status",
      status: 501,
      message: "This server does not support embeddings. Start it with `--embeddings`",
    });
    // Four attempts allowed: a retry would find no fault queued and succeed.
    const k = setup(4);
    const { doc, message } = await upload(k);
    expect(await k.ingest.handle(message)).toBe("failed");
    const failed = await k.service.getDocument("t1", "kb", doc.document_id);
    expect(failed.error?.code).toBe("embedding_failed");
    expect(failed.error?.message).toContain("Start it with `--embeddings`");
  });
});
