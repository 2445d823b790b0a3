import { describe, expect, it } from "vitest";
import { classifyFailure, RetryableError, StepError } from "../errors";
import type { KnowledgePort } from "./knowledge-port";
import type { IngestMessage } from "./model";
import { answerKnowledge, type KnowledgeRequest, knowledgeClient } from "./protocol";
import type { SearchScope } from "./search";

const scope: SearchScope = {
  tenant: "t1",
  namespace: { name: "support", knowledge_bases: ["handbook"] },
  knowledgeBase: "handbook",
};

const message: IngestMessage = {
  v: 1,
  kind: "ingest",
  op: "ingest",
  tenant_id: "t1",
  knowledge_base: "handbook",
  document_id: "doc1",
  version: 2,
};

const hit = {
  chunk_id: "c1",
  text: "Refunds within 30 days.",
  knowledge_base: "handbook",
  document_id: "doc1",
  filename: "policy.md",
  position: 0,
  score: 0.9,
};

/** A port that records what reached it, as the knowledge function's services would see it. */
function recordingPort(fail?: Error) {
  const seen: unknown[] = [];
  const port: KnowledgePort = {
    async chunks(s, query, topK) {
      seen.push({ op: "chunks", s, query, topK });
      if (fail) throw fail;
      return { chunks: [hit], calls: [] };
    },
    async graph(s, query) {
      seen.push({ op: "graph", s, query });
      if (fail) throw fail;
      return {
        entities: [{ name: "Refund", description: "money back" }],
        relationships: [],
        chunks: [hit],
        calls: [],
      };
    },
    async add(s, input) {
      seen.push({ op: "add", s, input });
      if (fail) throw fail;
      return {
        knowledge_base: "handbook",
        document_id: input.documentId,
        filename: "note.md",
        created: true,
        chunks: [{ chunk_id: `${input.documentId}:00000000:0`, position: 0, text: input.text }],
        usage: {
          llm_calls: 1,
          embedding_tokens: 3,
          input_tokens: 3,
          output_tokens: 0,
          cost_usd: 0,
        },
        calls: [],
      };
    },
    async handle(m, last) {
      seen.push({ op: "ingest", m, last });
      if (fail) throw fail;
      return "ready";
    },
  };
  return { port, seen };
}

const silent: { error(message: string): void } = { error: () => {} };
/** The client over JSON, as the Lambda invoke carries it. */
const overJson = (port: KnowledgePort, log = silent) =>
  knowledgeClient(async (request) =>
    JSON.parse(
      JSON.stringify(await answerKnowledge(port, JSON.parse(JSON.stringify(request)), log)),
    ),
  );

describe("the knowledge protocol", () => {
  it("carries a search's scope, query and top_k to the function and its chunks back", async () => {
    const { port, seen } = recordingPort();
    const found = await overJson(port).chunks(scope, "refunds?", 7);
    expect(found).toEqual({ chunks: [hit], calls: [] });
    expect(seen).toEqual([{ op: "chunks", s: scope, query: "refunds?", topK: 7 }]);
  });

  it("carries knowledge_add's text, title and document id to the function and the written chunks back", async () => {
    const { port, seen } = recordingPort();
    const written = await overJson(port).add(
      { ...scope, knowledgeBase: "handbook" },
      { text: "Refunds take 30 days.", title: "refunds", documentId: "mem_1" },
    );
    expect(written.chunks).toEqual([
      { chunk_id: "mem_1:00000000:0", position: 0, text: "Refunds take 30 days." },
    ]);
    expect(seen).toEqual([
      {
        op: "add",
        s: { ...scope, knowledgeBase: "handbook" },
        input: { text: "Refunds take 30 days.", title: "refunds", documentId: "mem_1" },
      },
    ]);
  });

  it("refuses an add whose text is over the limit or whose document id could name a path", async () => {
    const { port, seen } = recordingPort();
    const base = { v: 1, op: "add", scope: { tenant: "t1", namespace: { name: "default" } } };
    const long = await answerKnowledge(
      port,
      { ...base, document_id: "mem_1", text: "x".repeat(100_001) },
      silent,
    );
    expect(long).toMatchObject({ ok: false, error: { code: "knowledge_request_invalid" } });
    const path = await answerKnowledge(port, { ...base, document_id: "../x", text: "hi" }, silent);
    expect(path).toMatchObject({ ok: false, error: { code: "knowledge_request_invalid" } });
    expect(seen).toEqual([]);
  });

  it("carries a namespace without a list of knowledge bases as one (default searches all)", async () => {
    const { port, seen } = recordingPort();
    await overJson(port).graph({ tenant: "t1", namespace: { name: "default" } }, "who?");
    expect(seen).toEqual([
      {
        op: "graph",
        s: { tenant: "t1", namespace: { name: "default" }, knowledgeBase: undefined },
        query: "who?",
      },
    ]);
  });

  it("carries an ingest message and whether it is the last attempt", async () => {
    const { port, seen } = recordingPort();
    expect(await overJson(port).handle(message, true)).toBe("ready");
    expect(seen).toEqual([{ op: "ingest", m: message, last: true }]);
  });

  it.each([
    ["a step error", new StepError("embeddings_not_configured", "set OPENAI_API_KEY")],
    ["a retryable error with its delay", new RetryableError("llm_rate_limited", "slow down", 20)],
  ])(
    "throws %s again with its kind and code, so the worker decides as if it ran here",
    async (_, error) => {
      const { port } = recordingPort(error);
      const thrown = await overJson(port)
        .chunks(scope, "q", 5)
        .catch((e: unknown) => e);
      expect(thrown).toMatchObject({ kind: error.kind, code: error.code, message: error.message });
      expect(classifyFailure(thrown)).toEqual(classifyFailure(error));
    },
  );

  it("answers an error that is not ours as internal, which the worker retries, and logs it", async () => {
    const logged: string[] = [];
    const { port } = recordingPort(new TypeError("lance exploded"));
    const thrown = await overJson(port, {
      error: (m: string) => {
        logged.push(m);
      },
    })
      .handle(message)
      .catch((e: unknown) => e);
    expect(thrown).toMatchObject({ kind: "internal", code: "knowledge_failed" });
    expect(classifyFailure(thrown)).toEqual({ action: "retry" });
    expect(logged).toEqual(["knowledge request failed"]);
  });

  it.each([
    [
      "an unknown version",
      {
        v: 2,
        op: "chunks",
        scope: { tenant: "t1", namespace: { name: "d" } },
        query: "q",
        top_k: 5,
      },
    ],
    [
      "an extra field",
      {
        v: 1,
        op: "graph",
        scope: { tenant: "t1", namespace: { name: "d" } },
        query: "q",
        admin: true,
      },
    ],
    [
      "a top_k over 50",
      {
        v: 1,
        op: "chunks",
        scope: { tenant: "t1", namespace: { name: "d" } },
        query: "q",
        top_k: 5_000,
      },
    ],
    [
      "a tenant that is missing",
      { v: 1, op: "chunks", scope: { namespace: { name: "d" } }, query: "q", top_k: 5 },
    ],
    [
      "an ingest message of another shape",
      { v: 1, op: "ingest", message: { ...message, op: "drop_table" }, last_attempt: false },
    ],
    ["no object at all", "DROP TABLE"],
  ])("refuses %s before any service runs", async (_, request) => {
    const { port, seen } = recordingPort();
    const reply = await answerKnowledge(port, request, silent);
    expect(reply).toMatchObject({
      ok: false,
      error: { kind: "malformed", code: "knowledge_request_invalid" },
    });
    expect(seen).toEqual([]);
  });

  it("takes an answer that is not the protocol as an internal error", async () => {
    const client = knowledgeClient(async () => ({ chunks: [] }));
    await expect(client.chunks(scope, "q", 5)).rejects.toMatchObject({
      code: "knowledge_reply_invalid",
    });
  });

  it("sends exactly the versioned request the function parses", async () => {
    const sent: KnowledgeRequest[] = [];
    const client = knowledgeClient(async (request) => {
      sent.push(request);
      return { v: 1, ok: true, result: { chunks: [], calls: [] } };
    });
    await client.chunks(scope, "q", 3);
    expect(sent).toEqual([
      {
        v: 1,
        op: "chunks",
        scope: {
          tenant: "t1",
          namespace: { name: "support", knowledge_bases: ["handbook"] },
          knowledge_base: "handbook",
        },
        query: "q",
        top_k: 3,
      },
    ]);
  });
});
