// The LangGraph.js baseline of `npm run bench`, after the project's shared
// script (shared/bench/langgraph/bench.mjs, its "keys" graph): a linear graph
// of N nodes, node i sets its own key v{i} to 100 characters and counts, and a
// SqliteSaver on a file (WAL, as its setup() sets) checkpoints every step, with
// LangGraph's default durability. Two measures, as the bench takes ours:
//   timing       ms per step of one 100-step run (median of runs after warm-ups)
//   concurrency  steps per second of 20 threads of 100 steps at once, one saver
// Prints one line of JSON. Run by test/bench/bench.ts in a child process, with
// the same Node.
//
// better-sqlite3, the driver SqliteSaver is written for, is a native addon:
// npm builds it from source against the Node it installs for, and this
// machine's npm builds against Node 20's headers, which Node 24 cannot load
// (and its prebuilt binaries come from outside the npm registry). So the saver
// gets Node's own SQLite (node:sqlite) behind the few methods of
// better-sqlite3 it calls: the same SQL, the same SQLite engine, a file on disk.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

/** The part of better-sqlite3's Database that SqliteSaver uses, on node:sqlite. */
class NodeSqliteDatabase {
  constructor(file) {
    this.db = new DatabaseSync(file);
    // better-sqlite3 builds SQLite with these defaults (its deps/defines.gypi):
    // synchronous NORMAL in WAL mode (SqliteSaver's), a 16 MB page cache.
    this.db.exec(
      "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16000; PRAGMA foreign_keys = ON",
    );
  }
  /** better-sqlite3 binds `undefined` as NULL (a first checkpoint has no parent); node:sqlite refuses it. */
  prepare(sql) {
    const statement = this.db.prepare(sql);
    const bind = (args) => args.map((a) => (a === undefined ? null : a));
    return {
      get: (...args) => statement.get(...bind(args)),
      all: (...args) => statement.all(...bind(args)),
      run: (...args) => statement.run(...bind(args)),
    };
  }
  exec(sql) {
    this.db.exec(sql);
  }
  pragma(text, options = {}) {
    const rows = this.db.prepare(`PRAGMA ${text}`).all();
    return options.simple ? Object.values(rows[0] ?? {})[0] : rows;
  }
  transaction(fn) {
    return (...args) => {
      this.db.exec("BEGIN");
      try {
        const result = fn(...args);
        this.db.exec("COMMIT");
        return result;
      } catch (error) {
        this.db.exec("ROLLBACK");
        throw error;
      }
    };
  }
  close() {
    this.db.close();
  }
}

const value = (i) => `v${i}:${"x".repeat(100)}`.slice(0, 100);

function graphOf(steps, saver) {
  const spec = { counter: Annotation() };
  for (let i = 0; i < steps; i++) spec[`v${i}`] = Annotation();
  const graph = new StateGraph(Annotation.Root(spec));
  for (let i = 0; i < steps; i++) {
    graph.addNode(`n${i}`, (s) => ({ [`v${i}`]: value(i), counter: s.counter + 1 }));
  }
  graph.addEdge(START, "n0");
  for (let i = 0; i < steps - 1; i++) graph.addEdge(`n${i}`, `n${i + 1}`);
  graph.addEdge(`n${steps - 1}`, END);
  return graph.compile({ checkpointer: saver });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackvm-langgraph-"));
let files = 0;
function saverOnDisk() {
  const db = new NodeSqliteDatabase(path.join(dir, `bench-${files++}.sqlite`));
  const saver = new SqliteSaver(db);
  return { saver, db };
}

const STEPS = 100;
const config = (thread) => ({ configurable: { thread_id: thread }, recursionLimit: STEPS + 10 });

async function timing(warm, runs) {
  const { saver, db } = saverOnDisk();
  const graph = graphOf(STEPS, saver);
  const perStep = [];
  for (let r = 0; r < warm + runs; r++) {
    const started = performance.now();
    const out = await graph.invoke({ counter: 0 }, config(`timing-${r}`));
    const ms = performance.now() - started;
    if (out.counter !== STEPS) throw new Error(`counter ${out.counter}, not ${STEPS}`);
    if (r >= warm) perStep.push(ms / STEPS);
  }
  db.close();
  return { ms_per_step: median(perStep), runs: perStep };
}

async function concurrency(threads, warm, runs) {
  const { saver, db } = saverOnDisk();
  const graph = graphOf(STEPS, saver);
  const rates = [];
  for (let r = 0; r < warm + runs; r++) {
    const started = performance.now();
    const outs = await Promise.all(
      Array.from({ length: threads }, (_, j) =>
        graph.invoke({ counter: 0 }, config(`c-${r}-${j}`)),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    if (outs.some((o) => o.counter !== STEPS)) throw new Error("a thread did not finish");
    if (r >= warm) rates.push((threads * STEPS) / seconds);
  }
  db.close();
  return { steps_per_second: median(rates), threads, runs: rates };
}

const versions = Object.fromEntries(
  ["@langchain/langgraph", "@langchain/langgraph-checkpoint-sqlite", "@langchain/core"].map((p) => [
    p,
    JSON.parse(
      fs.readFileSync(path.join(import.meta.dirname, "node_modules", p, "package.json"), "utf8"),
    ).version,
  ]),
);
try {
  const result = {
    versions,
    node: process.version,
    timing: await timing(10, 7),
    concurrency: await concurrency(20, 2, 5),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
