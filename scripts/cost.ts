/**
 * Prints what one million steps cost on AWS, from the per-step counts that
 * `npm run bench` writes to `.stackvm/bench.json` (or the defaults of
 * `cost-model.ts` when there is no such file) and AWS's list prices.
 *
 * Then a month of knowledge: S3 storage of the index and the originals, and the
 * searches (S3 GETs, worker time), for `--chunks` stored and `--queries` a month.
 *
 * Usage: `npm run cost [-- --bench path/to/bench.json] [-- --steps 1000000] [-- --chunks 100000 --queries 1000000]`
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  costOf,
  defaultCounts,
  defaultKnowledgeCounts,
  knowledgeCostOf,
  parseCounts,
  prices,
} from "./cost-model";

const root = join(import.meta.dirname, "..");

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const benchPath = option("--bench") ?? join(root, ".stackvm", "bench.json");
const steps = Number(option("--steps") ?? 1_000_000);
if (!Number.isInteger(steps) || steps < 1) {
  console.error(`--steps takes a whole number of steps, 1 or more; got '${option("--steps")}'`);
  process.exit(2);
}

let counts = defaultCounts;
let source = `defaults (no ${benchPath}; run \`npm run bench\` to measure)`;
if (existsSync(benchPath)) {
  try {
    const parsed = parseCounts(JSON.parse(readFileSync(benchPath, "utf8")));
    counts = parsed.counts;
    source =
      benchPath + (parsed.defaulted.length ? ` (defaults for ${parsed.defaulted.join(", ")})` : "");
  } catch (error) {
    console.error(`${benchPath}: ${(error as Error).message}`);
    process.exit(2);
  }
}

const lines = costOf(counts, steps);
const total = lines.reduce((sum, l) => sum + l.cost, 0);
const money = (usd: number) => `$${usd < 0.01 && usd > 0 ? usd.toFixed(5) : usd.toFixed(2)}`;
const number = (n: number) =>
  n >= 100
    ? Math.round(n).toLocaleString("en-US")
    : n.toLocaleString("en-US", { maximumFractionDigits: 3 });

console.log(`Cost of ${steps.toLocaleString("en-US")} steps on AWS (${prices.asOf})`);
console.log(`Per-step counts from ${source}:`);
console.log(
  `  DynamoDB ${counts.dynamodb.reads_per_step} reads, ${counts.dynamodb.writes_per_step} writes, ${counts.dynamodb.bytes_written_per_step} bytes written (branch item ${counts.dynamodb.branch_item_bytes} bytes at the task's end, ${counts.dynamodb.head_move_write_units} WRU per head move on average; commit ${counts.dynamodb.commit_item_bytes} bytes); SQS ${counts.sqs.requests_per_step} requests; S3 ${counts.s3.puts_per_step} PUT, ${counts.s3.gets_per_step} GET; worker ${counts.lambda.worker_ms_per_step} ms at ${counts.lambda.memory_mb} MB; ${counts.logs.bytes_per_step} log bytes\n`,
);
const rows = lines.map((l) => [
  l.item,
  `${number(l.quantity)} ${l.unit}`,
  l.unit === "GB-s" || l.unitPrice >= 0.01
    ? `at $${l.unitPrice} per ${l.unit}`
    : `at $${Number((l.unitPrice * 1e6).toFixed(4))} per million`,
  money(l.cost),
]);
const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
for (const row of rows) {
  console.log(
    row
      .map((cell, i) => (i === 3 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  "),
  );
}
console.log(
  `\nTotal: ${money(total)} per ${steps.toLocaleString("en-US")} steps (${money((total / steps) * 1e6)} per million), LLM calls not included.`,
);
// A step on a branch with 10 MB of state (issue 22: 1,000 variables of 10 KB),
// when a bench measured one: `npm run bench` (its `ten_mb`), else
// `npm run bench:state` (`.stackvm/bench-state.json`). The same small step, with
// that branch's counts.
interface TenMb {
  reads_per_step: number;
  writes_per_step: number;
  bytes_written_per_step: number;
  branch_item_bytes: number;
  s3_per_step: number;
  ratio?: number;
}
const readJson = (path: string) =>
  existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>) : {};
const full = readJson(benchPath) as { ten_mb?: TenMb; growth?: { ten_mb_ratio?: number } };
const focused = readJson(option("--state-bench") ?? join(root, ".stackvm", "bench-state.json")) as {
  ten_mb?: TenMb;
};
const tenMb: { ten_mb?: TenMb; growth?: { ten_mb_ratio?: number } } = full.ten_mb
  ? full
  : focused.ten_mb
    ? { ten_mb: focused.ten_mb, growth: { ten_mb_ratio: focused.ten_mb.ratio ?? 1 } }
    : {};
if (tenMb.ten_mb) {
  const m = tenMb.ten_mb;
  const wide = costOf(
    {
      ...counts,
      dynamodb: {
        ...counts.dynamodb,
        reads_per_step: m.reads_per_step,
        writes_per_step: m.writes_per_step,
        bytes_written_per_step: m.bytes_written_per_step,
        branch_item_bytes: m.branch_item_bytes,
        head_move_write_units: Math.max(1, Math.ceil(m.branch_item_bytes / 1024)),
        branch_read_units: Math.max(1, Math.ceil(m.branch_item_bytes / 4096)),
      },
      s3: { ...counts.s3, puts_per_step: m.s3_per_step },
      lambda: {
        ...counts.lambda,
        worker_ms_per_step: counts.lambda.worker_ms_per_step * (tenMb.growth?.ten_mb_ratio ?? 1),
      },
    },
    steps,
  ).reduce((sum, l) => sum + l.cost, 0);
  console.log(
    `A small step on a branch holding 10 MB of state (1,000 variables of 10 KB): ${money((wide / steps) * 1e6)} per million (branch item ${m.branch_item_bytes} bytes, ${m.reads_per_step.toFixed(2)} reads, ${m.writes_per_step.toFixed(2)} writes, ${m.bytes_written_per_step} bytes written per step; worker time scaled by the bench's ratio ${tenMb.growth?.ten_mb_ratio ?? 1}).`,
  );
}
const waitCost = 1 * (counts.lambda.memory_mb / 1024) * prices.lambdaArmGbSecond * 1e6;
console.log(
  `Each second a step waits on the LLM adds ${money(waitCost)} per million steps of worker duration.`,
);

const knowledge = {
  ...defaultKnowledgeCounts,
  chunks: Number(option("--chunks") ?? defaultKnowledgeCounts.chunks),
  queries: Number(option("--queries") ?? defaultKnowledgeCounts.queries),
};
for (const [name, value] of [
  ["--chunks", knowledge.chunks],
  ["--queries", knowledge.queries],
] as const) {
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} takes a whole number, 0 or more; got '${option(name)}'`);
    process.exit(2);
  }
}
const knowledgeLines = knowledgeCostOf(knowledge);
console.log(
  `\nKnowledge, one month: ${knowledge.chunks.toLocaleString("en-US")} chunks stored (${knowledge.dimensions} dimensions), ${knowledge.queries.toLocaleString("en-US")} searches (${knowledge.gets_per_query} S3 GETs and ${knowledge.query_ms} ms of worker each)`,
);
for (const l of knowledgeLines) {
  console.log(
    `  ${l.item.padEnd(42)} ${number(l.quantity).padStart(14)} ${l.unit.padEnd(9)} ${money(l.cost).padStart(9)}`,
  );
}
const knowledgeTotal = knowledgeLines.reduce((sum, l) => sum + l.cost, 0);
console.log(
  `Knowledge total: ${money(knowledgeTotal)} a month; nothing while idle but the storage. Embedding tokens (text-embedding-3-small: $0.02 per million) and the graph's LLM calls at ingest are on each document's usage.`,
);
