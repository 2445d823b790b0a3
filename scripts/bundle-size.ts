/**
 * Prints each Lambda function's bundle size and cold import time, beside a
 * bare Hono hello-world measured the same way in the same run.
 *
 * - Bundles are built as SST builds them for Node: esbuild, minified, platform
 *   node, ESM, target node24, SST's `require` banner, and the packages a
 *   function installs instead of bundling (`nodejs.install`) left external.
 * - Cold import time: a fresh `node` process imports the bundle and reports
 *   how long the import took; the median of several runs (`--runs N`, default
 *   7). It is the part of a cold start the code controls.
 * - Targets: api and worker bundles under 1.5 MB; every cold import within 3x
 *   of the hello-world's.
 *
 * An entry file that is missing, or still a placeholder, is named and skipped.
 * Bundles are written to `.stackvm/bundles/` (git-ignored), inside the project
 * so that external packages resolve from its node_modules.
 *
 * Usage: `npm run bundle [-- --runs 11]`
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BuildOptions, build, type Metafile } from "esbuild";
import { esmBanner, sandboxInstalls } from "../infra/sandbox-scripts";

const root = join(import.meta.dirname, "..");
const outDir = join(root, ".stackvm", "bundles");

/** Each function's entry and what it installs instead of bundling (infra/*.ts `nodejs.install`). */
const entries: { name: string; file: string; external?: string[]; sizeTargetMb?: number }[] = [
  { name: "api", file: "packages/functions/src/api.ts", sizeTargetMb: 1.5 },
  { name: "worker", file: "packages/functions/src/worker.ts", sizeTargetMb: 1.5 },
  {
    name: "sandbox",
    file: "packages/functions/src/sandbox.ts",
    external: sandboxInstalls,
  },
  { name: "scheduler", file: "packages/functions/src/scheduler.ts" },
  { name: "sweep", file: "packages/functions/src/sweep.ts" },
  { name: "dlq", file: "packages/functions/src/dlq.ts" },
];

const importTargetRatio = 3;

/** A bare Hono app on Lambda: the baseline every function is compared with. */
const helloWorld = `
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
const app = new Hono();
app.get("/", (c) => c.text("hello"));
export const handler = handle(app);
`;

/** Settings the entry files read at start; fake, so that importing a bundle does not stop on them. */
const fakeEnvironment: Record<string, string> = {
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "AKIAFAKE",
  AWS_SECRET_ACCESS_KEY: "fakesecret",
  STACKVM_TABLE: "stackvm-bundle-table",
  STACKVM_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/stackvm-bundle.fifo",
  STACKVM_DLQ_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/stackvm-bundle-dlq.fifo",
  STACKVM_BUCKET: "stackvm-bundle-bucket",
  STACKVM_SANDBOX_FUNCTION: "stackvm-bundle-sandbox",
  STACKVM_SCHEDULE_GROUP: "stackvm-bundle-schedules",
  STACKVM_SCHEDULER_ROLE_ARN: "arn:aws:iam::123456789012:role/stackvm-bundle",
  STACKVM_SCHEDULER_FUNCTION_ARN: "arn:aws:lambda:us-east-1:123456789012:function:stackvm-bundle",
  STACKVM_SCHEDULE_DLQ_ARN: "arn:aws:sqs:us-east-1:123456789012:stackvm-bundle-schedules",
  STACKVM_ADMIN_KEY: "bundle-admin-key",
  OPENAI_API_KEY: "bundle-openai-key",
  LLM_MODEL: "gpt-4o-mini",
};

function parseRuns(argv: string[]): number {
  const at = argv.indexOf("--runs");
  if (at === -1) return 7;
  const runs = Number(argv[at + 1]);
  if (!Number.isInteger(runs) || runs < 1 || runs > 101) {
    console.error(`--runs takes a whole number of runs from 1 to 101; got '${argv[at + 1]}'`);
    process.exit(2);
  }
  return runs;
}

interface Bundle {
  outfile: string;
  bytes: number;
  /** The packages that weigh most in the bundle, as [name, bytes]. */
  heaviest: [string, number][];
}

async function bundle(
  name: string,
  options: Partial<BuildOptions>,
  external: string[] = [],
): Promise<Bundle> {
  const outfile = join(outDir, `${name}.mjs`);
  const result = await build({
    ...options,
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node24",
    mainFields: ["module", "main"],
    banner: { js: esmBanner },
    external: ["sharp", "pg-native", ...external],
    outfile,
    metafile: true,
    logLevel: "silent",
  });
  const output = Object.values(result.metafile.outputs)[0];
  return { outfile, bytes: output?.bytes ?? 0, heaviest: heaviestPackages(result.metafile) };
}

function heaviestPackages(metafile: Metafile): [string, number][] {
  const byPackage = new Map<string, number>();
  const output = Object.values(metafile.outputs)[0];
  for (const [path, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key =
      match?.[1] ??
      (path.startsWith("packages/") ? path.split("/").slice(0, 2).join("/") : "other");
    byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
  }
  return [...byPackage.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
}

/** Milliseconds a fresh node process takes to import the file, or the error it stopped on. */
function importOnce(file: string): { ms: number } | { error: string } {
  // Lambda's Node runtime defines the global `awslambda` (response streaming);
  // a bare node does not, and `streamHandle` reads it while the module loads.
  const script = [
    "globalThis.awslambda ??= { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };",
    "const t = performance.now();",
    `await import(${JSON.stringify(pathToFileURL(file).href)});`,
    "process.stdout.write(String(performance.now() - t));",
  ].join("\n");
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...fakeEnvironment },
    encoding: "utf8",
    timeout: 60_000,
  });
  if (child.status !== 0) {
    const lines = (child.stderr || child.error?.message || "no output").trim().split("\n");
    const message = lines.find((l) => /^\w*Error\b/.test(l)) ?? lines.at(-1) ?? "failed";
    return { error: message.slice(0, 300) };
  }
  return { ms: Number(child.stdout) };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/**
 * Median cold import of `file`, and of the hello-world measured in turn with
 * it, so that the ratio compares runs made under the same load.
 */
function coldImport(
  file: string,
  hello: string,
  runs: number,
): { ms: number; helloMs: number } | { error: string } {
  const times: number[] = [];
  const helloTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const baseline = importOnce(hello);
    const measured = importOnce(file);
    if ("error" in measured) return measured;
    if ("error" in baseline) return { error: `the hello-world does not import: ${baseline.error}` };
    times.push(measured.ms);
    helloTimes.push(baseline.ms);
  }
  return { ms: median(times), helloMs: median(helloTimes) };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const isPlaceholder = (file: string) =>
  readFileSync(file, "utf8").startsWith("// placeholder: replaced by the entry file of its issue");

async function main() {
  const runs = parseRuns(process.argv.slice(2));
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  console.log(
    `node ${process.version}, esbuild minified ESM for node24, median of ${runs} cold imports\n`,
  );

  const hello = await bundle("hello-world", {
    stdin: { contents: helloWorld, resolveDir: join(root, "packages", "api"), loader: "ts" },
  });
  const helloImport = coldImport(hello.outfile, hello.outfile, runs);
  if ("error" in helloImport)
    throw new Error(`the hello-world bundle does not import: ${helloImport.error}`);
  const rows: string[][] = [
    ["hello-world (Hono)", kb(hello.bytes), `${helloImport.ms.toFixed(1)} ms`, "1.0x", ""],
  ];
  const failures: string[] = [];
  const skipped: string[] = [];

  for (const entry of entries) {
    const file = join(root, entry.file);
    if (!existsSync(file)) {
      skipped.push(`${entry.name}: ${entry.file} is missing`);
      continue;
    }
    if (isPlaceholder(file)) {
      skipped.push(`${entry.name}: ${entry.file} is still a placeholder`);
      continue;
    }
    let result: Bundle;
    try {
      result = await bundle(entry.name, { entryPoints: [file] }, entry.external);
    } catch (error) {
      failures.push(`${entry.name}: does not bundle: ${(error as Error).message.split("\n")[0]}`);
      continue;
    }
    const imported = coldImport(result.outfile, hello.outfile, runs);
    const ratio = "ms" in imported ? imported.ms / imported.helloMs : Number.NaN;
    const notes = result.heaviest.map(([name, bytes]) => `${name} ${kb(bytes)}`).join(", ");
    rows.push([
      entry.name,
      kb(result.bytes),
      "ms" in imported ? `${imported.ms.toFixed(1)} ms` : "import failed",
      Number.isNaN(ratio) ? "-" : `${ratio.toFixed(1)}x`,
      notes,
    ]);
    if (entry.sizeTargetMb !== undefined && result.bytes > entry.sizeTargetMb * 1024 * 1024) {
      failures.push(`${entry.name}: bundle ${kb(result.bytes)} is over ${entry.sizeTargetMb} MB`);
    }
    if ("error" in imported) failures.push(`${entry.name}: import failed: ${imported.error}`);
    else if (ratio > importTargetRatio) {
      failures.push(
        `${entry.name}: cold import ${ratio.toFixed(1)}x the hello-world's, over ${importTargetRatio}x`,
      );
    }
  }

  const header = ["function", "bundle", "cold import", "vs hello", "heaviest parts"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  for (const row of [header, ...rows]) {
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
  }
  for (const line of skipped) console.log(`skipped ${line}`);
  if (failures.length > 0) {
    console.log(`\nTargets missed:\n${failures.map((f) => `- ${f}`).join("\n")}`);
    process.exitCode = 1;
  } else {
    console.log(
      `\nTargets met: api and worker under 1.5 MB, cold imports within ${importTargetRatio}x of the hello-world.`,
    );
  }
}

await main();
