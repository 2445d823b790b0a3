/**
 * The knowledge benchmark (`npm run bench:knowledge`): ingest throughput (chunks
 * per second through extract, chunk, graph, embed and index, with the embedding
 * and LLM servers' time taken out: both are in-process fakes whose time is
 * measured and subtracted), then query latency p50/p95 of the LanceDB index at
 * 10,000 and 100,000 chunks, in a local folder and on S3 through the local
 * emulator, with recall@10 against an exact search over the same vectors in the
 * same run. A script, not a timed test.
 *
 * Options: `--dim N` (vector size, default 768, as nomic-embed-text; 1536 is
 * text-embedding-3-small), `--queries N` (default 200), `--sizes 10000,100000`,
 * `--no-s3` (skip the emulator), `--no-ingest`, `--nprobes N` and `--refine N`
 * (the index's search settings, default 40 and 10).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { createAwsClients, LanceKnowledgeIndex, lanceEmulatorStorage } from "@stackvm/aws";
import {
  createEmbedder,
  createLlmSession,
  type EmbeddingPort,
  type IndexRow,
  IngestMessage,
  IngestService,
  type KnowledgeIndex,
  KnowledgeService,
  KnowledgeStore,
  type LlmConfig,
  type LlmPort,
  silentLog,
} from "@stackvm/core";
import { MemoryBlobs, MemoryItemStore, MemoryQueue } from "@stackvm/core/testing";
import { startEmulators } from "../../packages/local/src/emulators";
import { bagOfWords } from "../support/llm-server";

// LanceDB's Rust log: warnings only clutter the numbers.
process.env.LANCE_LOG ??= "error";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const DIM = Number(arg("dim", "768"));
const QUERIES = Number(arg("queries", "200"));
const SIZES = arg("sizes", "10000,100000").split(",").map(Number);
const WITH_S3 = !process.argv.includes("--no-s3");
/** Search settings of the index (`--nprobes`, `--refine`), to weigh recall against latency. */
const SEARCH = {
  nprobes: Number(arg("nprobes", "40")),
  refineFactor: Number(arg("refine", "10")),
};

const LLM = {
  models: { default: "m", reason: "m", eval: "m" },
  timeoutMs: 10_000,
  maxAttempts: 1,
  repairRounds: 0,
  prices: {},
} as unknown as LlmConfig;

/** A seeded generator, so every run draws the same vectors. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const gauss = (rand: () => number) =>
  Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());

function normalize(v: number[]): number[] {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** Clustered vectors (topics), as embeddings of real text are: 1,000 centres, points near them. */
function vectors(count: number, seed: number): number[][] {
  const rand = random(seed);
  const centres = Array.from({ length: 1000 }, () =>
    normalize(Array.from({ length: DIM }, () => gauss(rand))),
  );
  return Array.from({ length: count }, () => {
    const centre = centres[Math.floor(rand() * centres.length)]!;
    // About 0.9 cosine to its centre: a topic, with room to rank within it.
    return normalize(centre.map((x) => x + (0.5 * gauss(rand)) / Math.sqrt(DIM)));
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function ingestThroughput(index: KnowledgeIndex, label: string): Promise<void> {
  let serverMs = 0;
  const timed = async <T>(work: () => Promise<T> | T): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      serverMs += performance.now() - started;
    }
  };
  const embeddings: EmbeddingPort = {
    embed: (request) =>
      timed(() => ({
        vectors: request.input.map((t) => bagOfWords(t)),
        model: request.model,
        inputTokens: request.input.length * 100,
      })),
  };
  const graphLlm: LlmPort = {
    complete: (request) =>
      timed(() => {
        const names = [
          ...new Set(request.messages.at(-1)?.content.match(/\b[A-Z][a-z]{3,}\b/g) ?? []),
        ].slice(0, 4);
        const text = JSON.stringify({
          entities: names.map((name) => ({ name, description: `${name} in the text` })),
          relationships: names
            .slice(1)
            .map((name) => ({ source: names[0], target: name, description: "related" })),
        });
        return { text, model: "m", inputTokens: 100, outputTokens: 50 };
      }),
  };
  const items = new MemoryItemStore();
  const blobs = new MemoryBlobs();
  const queue = new MemoryQueue();
  const clock = { now: () => Date.now() };
  const knowledge = new KnowledgeService({
    knowledge: new KnowledgeStore(items),
    blobs,
    queue,
    clock,
    maxUploadBytes: 50 << 20,
  });
  const ingest = new IngestService({
    knowledge: new KnowledgeStore(items),
    blobs,
    clock,
    index,
    embedder: createEmbedder({ port: embeddings, model: "bench", llm: LLM }),
    llm: () => createLlmSession({ port: graphLlm, config: LLM, budget: {} }),
    log: silentLog,
    graphConcurrency: 8,
  });
  await knowledge.create("bench", { name: "docs" });
  const rand = random(7);
  const words =
    "Kyoto Osaka temple castle river garden market station museum festival bridge harbour library theatre mountain forest".split(
      " ",
    );
  const sentence = () =>
    `${Array.from({ length: 14 }, () => words[Math.floor(rand() * words.length)]).join(" ")}.`;
  for (let d = 0; d < 40; d++) {
    const sections = Array.from(
      { length: 12 },
      (_, s) =>
        `## Section ${s}\n\n${Array.from({ length: 6 }, sentence).join(" ")}\n\n${Array.from({ length: 6 }, sentence).join(" ")}`,
    );
    await knowledge.upload("bench", "docs", {
      filename: `doc${d}.md`,
      contentType: "text/markdown",
      bytes: new TextEncoder().encode(`# Document ${d}\n\n${sections.join("\n\n")}`),
    });
  }
  const messages = await queue.receive(100);
  const started = performance.now();
  for (const message of messages)
    await ingest.handle(IngestMessage().parse(JSON.parse(message.body)));
  const wall = performance.now() - started;
  const listed = await knowledge.listDocuments("bench", "docs", null, 100);
  const chunks = listed.documents.reduce((n, d) => n + d.chunks, 0);
  const own = wall - serverMs;
  console.log(
    `ingest (${label}): ${listed.documents.length} documents, ${chunks} chunks in ${ms(wall)}; ${ms(serverMs)} in the embedding and LLM fakes; ` +
      `${((chunks / own) * 1000).toFixed(0)} chunks/s excluding them`,
  );
}

async function queryLatency(index: LanceKnowledgeIndex, label: string): Promise<void> {
  const all = vectors(Math.max(...SIZES), 42);
  // Queries near stored chunks (a question about something the documents say), from the first 10,000 rows.
  const near = random(4242);
  const queries = Array.from({ length: QUERIES }, () => {
    const row = all[Math.floor(near() * Math.min(10_000, all.length))]!;
    return normalize(row.map((x) => x + (0.5 * gauss(near)) / Math.sqrt(DIM)));
  });
  let loaded = 0;
  for (const size of SIZES) {
    // Grow the table to `size` in documents of 1,000 rows (the last write builds or refreshes the IVF-PQ index).
    const buildStarted = performance.now();
    for (; loaded < size; loaded += 1000) {
      const rows: IndexRow[] = all.slice(loaded, loaded + 1000).map((vector, i) => ({
        kind: "chunk",
        id: `c${loaded + i}`,
        document_id: `d${loaded / 1000}`,
        filename: `d${loaded / 1000}.md`,
        position: i,
        text: `chunk ${loaded + i}`,
        data: "{}",
        vector,
      }));
      await index.replaceDocument("bench", "docs", `d${loaded / 1000}`, rows);
    }
    const buildMs = performance.now() - buildStarted;
    const latencies: number[] = [];
    let found = 0;
    for (const query of queries) {
      const started = performance.now();
      const hits = await index.search("bench", {
        knowledgeBases: ["docs"],
        kind: "chunk",
        vector: query,
        topK: 10,
      });
      latencies.push(performance.now() - started);
      const exact = exactTop10(all.slice(0, size), query);
      found += hits.filter((h) => exact.has(Number(h.id.slice(1)))).length;
    }
    latencies.sort((a, b) => a - b);
    console.log(
      `query (${label}, ${size.toLocaleString("en-US")} chunks, dim ${DIM}): p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}, ` +
        `recall@10 ${(found / (queries.length * 10)).toFixed(3)} vs exact; table built in ${(buildMs / 1000).toFixed(1)} s`,
    );
  }
}

function exactTop10(rows: number[][], query: number[]): Set<number> {
  const scores = rows.map((row, i) => {
    let dot = 0;
    for (let j = 0; j < DIM; j++) dot += row[j]! * query[j]!;
    return [dot, i] as const;
  });
  scores.sort((a, b) => b[0] - a[0]);
  return new Set(scores.slice(0, 10).map(([, i]) => i));
}

const dir = await mkdtemp(join(tmpdir(), "stackvm-knowledge-bench-"));
try {
  if (!process.argv.includes("--no-ingest")) {
    await ingestThroughput(
      new LanceKnowledgeIndex({ root: join(dir, "ingest") }),
      "LanceDB, local folder",
    );
  }
  await queryLatency(
    new LanceKnowledgeIndex({ root: join(dir, "query"), ...SEARCH }),
    "LanceDB, local folder",
  );
  if (WITH_S3) {
    const emulators = await startEmulators({ dataDir: null });
    const clients = createAwsClients(emulators);
    try {
      await clients.s3.send(new CreateBucketCommand({ Bucket: "knowledge-bench" }));
      const storageOptions = lanceEmulatorStorage(
        emulators.endpoints.s3,
        emulators.region,
        emulators.credentials,
      );
      await ingestThroughput(
        new LanceKnowledgeIndex({ root: "s3://knowledge-bench/ingest", storageOptions }),
        "LanceDB on the S3 emulator",
      );
      await queryLatency(
        new LanceKnowledgeIndex({ root: "s3://knowledge-bench/query", storageOptions, ...SEARCH }),
        "LanceDB on the S3 emulator",
      );
    } finally {
      clients.destroy();
      await emulators.stop();
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
