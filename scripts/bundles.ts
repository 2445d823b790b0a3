/**
 * Builds the Lambda functions as SST builds them for Node, and measures what a
 * cold start loads: shared by `npm run bundle` (scripts/bundle-size.ts) and
 * the test that keeps rarely used clients out of the cold start
 * (test/infra/cold-start.test.ts).
 *
 * SST's build: esbuild, minified, platform node, ESM, target node24, SST's
 * `require` banner, code splitting (`nodejs.splitting` in infra/*.ts: each
 * dynamic `import()` becomes a chunk loaded on first use), and the packages a
 * function installs instead of bundling (`nodejs.install`) left external.
 * Bundles are written to `.stackvm/bundles/` (git-ignored), inside the project
 * so that external packages resolve from its node_modules.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BuildOptions, build, type Metafile } from "esbuild";
import { apiInstalls } from "../infra/api-installs";
import esbuildPlugins from "../infra/esbuild-plugins.mjs";
import type { Architecture, InstallSpec } from "../infra/function-installs";
import {
  knowledgeArchitecture,
  knowledgeInstallSpec,
  knowledgeInstalls,
} from "../infra/knowledge-installs";
import { bundleSandboxScripts, esmBanner, sandboxInstalls } from "../infra/sandbox-scripts";

export interface FunctionEntry {
  name: string;
  file: string;
  /** Lambda's architecture for it (infra/function-defaults.ts: arm64 unless the function says). */
  arch: Architecture;
  /** Packages left out of the bundle, installed beside it instead. */
  external?: string[];
  /** What is installed beside the bundle (SST's `nodejs.install`, or the function's postbuild hook). */
  install?: InstallSpec;
  /** What the function's postbuild hook adds to the bundle's folder. */
  postbuild?: (dir: string, root: string) => Promise<unknown>;
  /** Deployed only from S3 (its zip is over the 50 MB of a direct upload; scripts/function-packages.ts). */
  s3UploadOnly?: boolean;
  /** How many times the floor's cold import its own may take (the issue's goals). */
  importGoal?: number;
}

const root = join(import.meta.dirname, "..");
export const outDir = join(root, ".stackvm", "bundles");

/** Each function's entry and what it installs instead of bundling (infra/*.ts `nodejs.install`). */
export const entries: FunctionEntry[] = [
  {
    name: "api",
    file: "packages/functions/src/api.ts",
    arch: "arm64",
    external: apiInstalls,
    install: { packages: apiInstalls },
    importGoal: 2,
  },
  {
    name: "worker",
    file: "packages/functions/src/worker.ts",
    arch: "arm64",
    importGoal: 1.5,
  },
  {
    name: "sandbox",
    file: "packages/functions/src/sandbox.ts",
    arch: "arm64",
    external: sandboxInstalls,
    install: { packages: sandboxInstalls },
    postbuild: (dir, root) => bundleSandboxScripts(dir, root, "index"),
    importGoal: 1.5,
  },
  { name: "scheduler", file: "packages/functions/src/scheduler.ts", arch: "arm64" },
  { name: "sweep", file: "packages/functions/src/sweep.ts", arch: "arm64" },
  { name: "dlq", file: "packages/functions/src/dlq.ts", arch: "arm64" },
  {
    name: "knowledge",
    file: "packages/functions/src/knowledge-function.ts",
    arch: knowledgeArchitecture,
    install: knowledgeInstallSpec(knowledgeArchitecture),
    s3UploadOnly: true,
  },
];

/** A bare Hono app on Lambda: the baseline every function is compared with. */
export const helloWorld = `
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
  STACKVM_KNOWLEDGE_FUNCTION: "stackvm-bundle-knowledge",
  STACKVM_SCHEDULE_GROUP: "stackvm-bundle-schedules",
  STACKVM_SCHEDULER_ROLE_ARN: "arn:aws:iam::123456789012:role/stackvm-bundle",
  STACKVM_SCHEDULER_FUNCTION_ARN: "arn:aws:lambda:us-east-1:123456789012:function:stackvm-bundle",
  STACKVM_SCHEDULE_DLQ_ARN: "arn:aws:sqs:us-east-1:123456789012:stackvm-bundle-schedules",
  STACKVM_ADMIN_KEY: "bundle-admin-key",
  OPENAI_API_KEY: "bundle-openai-key",
  LLM_MODEL: "gpt-4o-mini",
};

export interface Bundle {
  /** The entry file to import. */
  entry: string;
  /** Every file of the bundle: the entry and all its chunks. */
  bytes: number;
  /** What a cold start loads: the entry and the chunks it imports statically. */
  eagerBytes: number;
  /** The packages that weigh most in what a cold start loads, as [name, bytes]. */
  heaviest: [string, number][];
  /** Every input file the cold start loads (to check what stays out of it). */
  eagerInputs: string[];
  /** Every input file of the bundle. */
  allInputs: string[];
  /** The input files some code of the bundle imports on first use (`import()`). */
  lazyInputs: string[];
}

/**
 * Builds one function as SST does with `nodejs.splitting` (infra/*.ts): the
 * entry plus a chunk per dynamic `import()`, which loads on first use.
 */
export async function bundle(
  name: string,
  options: Partial<BuildOptions>,
  external: string[] = [],
  dir = join(outDir, name),
  /** False keeps esbuild's `// path` comment before each module (scripts/start-profile.ts reads them). */
  minify = true,
): Promise<Bundle> {
  const result = await build({
    ...options,
    bundle: true,
    minify,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node24",
    mainFields: ["module", "main"],
    banner: { js: esmBanner },
    // Knowledge's packages are external in every function (infra/function-defaults.ts).
    external: ["sharp", "pg-native", ...knowledgeInstalls, ...external],
    outdir: dir,
    entryNames: "index",
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    metafile: true,
    logLevel: "silent",
    // As SST builds every function (`nodejs.plugins`, infra/function-defaults.ts).
    plugins: esbuildPlugins,
  });
  return measure(result.metafile);
}

/** Sizes the outputs of a build, following static imports from the entry for what loads at start. */
export function measure(metafile: Metafile): Bundle {
  const outputs = metafile.outputs;
  // Each dynamic import is an entry point of its own (a chunk); the function's is `index.mjs`.
  const entry = Object.keys(outputs).find((path) => path.endsWith("/index.mjs"));
  if (entry === undefined) throw new Error("the build has no entry output");
  const eager = new Set<string>();
  const visit = (path: string) => {
    if (eager.has(path)) return;
    eager.add(path);
    for (const imported of outputs[path]?.imports ?? []) {
      if (imported.kind === "import-statement" && outputs[imported.path]) visit(imported.path);
    }
  };
  visit(entry);
  const byPackage = new Map<string, number>();
  const eagerInputs: string[] = [];
  for (const path of eager) {
    for (const [input, { bytesInOutput }] of Object.entries(outputs[path]?.inputs ?? {})) {
      eagerInputs.push(input);
      const key = packageOf(input);
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
    }
  }
  const bytes = (paths: Iterable<string>) =>
    [...paths].reduce((sum, path) => sum + (outputs[path]?.bytes ?? 0), 0);
  return {
    entry: join(root, entry),
    bytes: bytes(Object.keys(outputs).filter((path) => !path.endsWith(".map"))),
    eagerBytes: bytes(eager),
    heaviest: [...byPackage.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4),
    eagerInputs,
    allInputs: Object.entries(outputs).flatMap(([, output]) => Object.keys(output.inputs)),
    lazyInputs: [
      ...new Set(
        Object.values(metafile.inputs).flatMap((input) =>
          input.imports
            .filter((i) => i.kind === "dynamic-import" && !i.external)
            .map((i) => i.path),
        ),
      ),
    ],
  };
}

/** The npm package a bundled input comes from (`zod`, `@smithy/core`), or undefined for the project's own files. */
export function npmPackageOf(input: string): string | undefined {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1];
}

function packageOf(input: string): string {
  return (
    npmPackageOf(input) ??
    (input.startsWith("packages/") ? input.split("/").slice(0, 2).join("/") : "other")
  );
}

/**
 * A whole-number option of a script (`--runs 11`): its value, or `fallback`
 * when absent; a value out of 1 to `max` ends the script with a message.
 */
export function wholeNumberOption(
  argv: string[],
  name: string,
  fallback: number,
  max: number,
): number {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    console.error(`${name} takes a whole number from 1 to ${max}; got '${argv[at + 1]}'`);
    process.exit(2);
  }
  return value;
}

/**
 * What a fresh node process spends importing the file: the wall time, and the
 * CPU time of the process (user and system, all its threads), or the error it
 * stopped on. On a machine shared with other work the wall time includes the
 * time the process waits for a core; the CPU time is the work itself.
 */
export function importOnce(file: string): { ms: number; cpuMs: number } | { error: string } {
  const script = [
    "const t = performance.now();",
    "const cpu = process.cpuUsage();",
    `await import(${JSON.stringify(pathToFileURL(file).href)});`,
    "const used = process.cpuUsage(cpu);",
    "process.stdout.write(JSON.stringify([performance.now() - t, (used.user + used.system) / 1000]));",
  ].join("\n");
  const run = inFreshNode(script);
  if ("error" in run) return run;
  const [ms, cpuMs] = JSON.parse(run.stdout) as [number, number];
  return { ms, cpuMs };
}

/**
 * A fresh node process imports a probe (a script bundled like its function)
 * and awaits `call` on it: the milliseconds of the import and of both, and
 * what the call answered (as JSON), or the error it stopped on.
 */
function probeOnce<T>(
  file: string,
  call: string,
): { importMs: number; ms: number; answer: T } | { error: string } {
  const run = inFreshNode(
    [
      "const t = performance.now();",
      `const probe = await import(${JSON.stringify(pathToFileURL(file).href)});`,
      "const importMs = performance.now() - t;",
      `const answer = await probe.${call};`,
      "process.stdout.write(JSON.stringify({ importMs, ms: performance.now() - t, answer }));",
    ].join("\n"),
  );
  return "error" in run
    ? run
    : (JSON.parse(run.stdout) as { importMs: number; ms: number; answer: T });
}

/**
 * A task for the worker's step probe, created in a fresh node process as the
 * API would (scripts/worker-step-probe.ts `newTask`): its items and first step
 * message as JSON, or the error it stopped on.
 */
export function probeTask(file: string): { task: string } | { error: string } {
  const run = probeOnce<unknown>(file, "newTask()");
  return "error" in run ? run : { task: JSON.stringify(run.answer) };
}

/**
 * A fresh node process imports the worker's step probe
 * (scripts/worker-step-probe.ts, bundled like the worker) and runs a task's
 * first step through the worker's handler, the task made by another process
 * ({@link probeTask}): the milliseconds of the import, of the step, and of
 * both, or the error it stopped on.
 */
export function stepOnce(
  file: string,
): { importMs: number; stepMs: number; ms: number } | { error: string } {
  const made = probeTask(file);
  if ("error" in made) return { error: `the probe's task: ${made.error}` };
  const run = probeOnce<number>(file, `firstStep(${made.task})`);
  return "error" in run ? run : { importMs: run.importMs, stepMs: run.answer, ms: run.ms };
}

/**
 * A fresh node process imports the API's request probe
 * (scripts/api-request-probe.ts, bundled like the API) and sends its first
 * requests: the milliseconds of the import, of a task's start from a plan, and
 * of the first read of the OpenAPI document, or the error it stopped on.
 */
export function requestsOnce(
  file: string,
): { importMs: number; startTaskMs: number; openapiMs: number } | { error: string } {
  const run = probeOnce<{ startTask: number; openapi: number }>(file, "firstRequests()");
  return "error" in run
    ? run
    : { importMs: run.importMs, startTaskMs: run.answer.startTask, openapiMs: run.answer.openapi };
}

/**
 * Lambda's Node runtime defines the global `awslambda` (response streaming); a
 * bare node does not, and `streamHandle` reads it while the module loads.
 */
const lambdaGlobals =
  "globalThis.awslambda ??= { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };";

/** Runs an ES module script in a fresh node process with the fake Lambda environment and globals: its output, or the error it stopped on. */
export function inFreshNode(script: string): { stdout: string } | { error: string } {
  const child = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", `${lambdaGlobals}\n${script}`],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...fakeEnvironment },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  if (child.status !== 0) {
    const lines = (child.stderr || child.error?.message || "no output").trim().split("\n");
    const message = lines.find((l) => /^\w*Error\b/.test(l)) ?? lines.at(-1) ?? "failed";
    return { error: message.slice(0, 300) };
  }
  return { stdout: child.stdout };
}

/**
 * The floor of this project's stack: what any function that serves one
 * request pays at cold start with the libraries the project mandates (Hono,
 * zod, the DynamoDB and SQS clients of the AWS SDK v3), and no code of ours.
 */
export const mandatedFloor = `
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import * as z from "zod";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { SQSClient, SendMessageCommand } from "@aws-sdk/client-sqs";
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const sqs = new SQSClient({});
const Body = z.object({ id: z.string().min(1) });
const app = new Hono();
app.post("/", async (c) => {
  const { id } = Body.parse(await c.req.json());
  const { Item } = await doc.send(new GetCommand({ TableName: "t", Key: { id } }));
  await sqs.send(new SendMessageCommand({ QueueUrl: "https://q", MessageBody: id }));
  return c.json(Item ?? {});
});
export const handler = handle(app);
`;

/** Builds a function given as source text (the baselines), resolved from the project's root. */
export function bundleSource(name: string, contents: string): Promise<Bundle> {
  return bundle(name, { stdin: { contents, resolveDir: root, loader: "ts" } });
}
