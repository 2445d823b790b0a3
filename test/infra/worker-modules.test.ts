/**
 * What the step worker loads to run a step: the worker's wiring, bundled as
 * SST bundles the worker (scripts/worker-step-probe.ts), imported in a fresh
 * process that records every module file it loads (`module.registerHooks`),
 * then a task's first step run through the worker's handler (the task made by
 * another process, as the API makes it). The chunks loaded
 * are mapped back to their sources with esbuild's metafile: nothing of
 * LanceDB, unpdf, the MCP SDK or Bedrock's client may be among them; they load
 * when a step needs them (knowledge is in another function altogether). Nor
 * cron-parser and luxon: only schedules read cron, and a step never does. Nor
 * the JSON Schema compiler (Ajv and RE2), which loads with the first tool
 * source or ask_human; nor the planner, which loads with the first step that
 * plans (the probe's first step runs a plan given), nor the plan checker,
 * which loads with the first plan checked, nor code_task's loop, nor what an
 * LLM call does (the session's calls, llm_generate's prompts), which loads with
 * the first call; nor web_fetch's page reader (linkedom, Readability,
 * Turndown), which loads with the first page read; nor the services only the API builds (the worker builds
 * the step system alone, `createStepSystem` in packages/functions/src/system.ts).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { knowledgeInstalls } from "../../infra/knowledge-installs";
import { esmBanner } from "../../infra/sandbox-scripts";
import { probeTask } from "../../scripts/bundles";
import { packagesDir } from "../../scripts/function-packages";
import { projectRoot } from "./sst-harness";

/** Sources per output file, and the files the fresh process loaded. */
let inputsOf: Map<string, string[]>;
let loaded: string[];
/** Node's own modules the fresh process loaded (`node:http`, ...). */
let builtins: string[];

beforeAll(async () => {
  const dir = join(packagesDir, "test-worker-modules");
  const result = await build({
    entryPoints: [join(projectRoot, "scripts/worker-step-probe.ts")],
    bundle: true,
    minify: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node24",
    mainFields: ["module", "main"],
    banner: { js: esmBanner },
    external: ["sharp", "pg-native", ...knowledgeInstalls],
    outdir: dir,
    entryNames: "index",
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    metafile: true,
    logLevel: "silent",
  });
  inputsOf = new Map(
    Object.entries(result.metafile.outputs).map(([file, output]) => [
      join(projectRoot, file),
      Object.keys(output.inputs),
    ]),
  );
  // The task is made in another process, as the API makes it: what checking its
  // plan loads is not the step's.
  const made = probeTask(join(dir, "index.mjs"));
  if ("error" in made) throw new Error(`the probe's task failed: ${made.error}`);
  const script = [
    'import { registerHooks } from "node:module";',
    "const seen = new Set();",
    "registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });",
    `const probe = await import(${JSON.stringify(pathToFileURL(join(dir, "index.mjs")).href)});`,
    `await probe.firstStep(${made.task});`,
    "process.stdout.write(JSON.stringify([...seen]));",
  ].join("\n");
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? "",
      AWS_REGION: "us-east-1",
      STACKVM_TABLE: "t",
      STACKVM_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/steps.fifo",
      STACKVM_BUCKET: "b",
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  if (child.status !== 0) throw new Error(`the probe failed: ${child.stderr}`);
  const urls = JSON.parse(child.stdout) as string[];
  builtins = urls.filter((url) => url.startsWith("node:"));
  loaded = urls.filter((url) => url.startsWith("file:")).map((url) => new URL(url).pathname);
}, 120_000);

/** The sources of every file loaded, chunks mapped back through the metafile. */
const loadedSources = () => loaded.flatMap((file) => inputsOf.get(file) ?? [file]);
/** The sources of the whole bundle, loaded or not. */
const bundledSources = () => [...inputsOf.values()].flat();

describe("the worker running a step", () => {
  it("loads the step's own code and the clients every step uses (the listing sees modules)", () => {
    const sources = loadedSources();
    expect(sources).toContainEqual(expect.stringContaining("packages/core/src/vm/step.ts"));
    expect(sources).toContainEqual(
      expect.stringContaining("packages/functions/src/worker-handler.ts"),
    );
    expect(sources.some((s) => s.includes("node_modules/@aws-sdk/client-dynamodb/"))).toBe(true);
  });

  it.each([
    ["LanceDB", /@lancedb\/|packages\/aws\/src\/lance-index\.ts/],
    ["unpdf (the PDF reader)", /node_modules\/unpdf\//],
    ["the MCP SDK", /node_modules\/@modelcontextprotocol\/sdk\//],
    ["Bedrock's client", /node_modules\/@aws-sdk\/client-bedrock-runtime\//],
    ["the OpenAI client", /node_modules\/openai\//],
    ["the Lambda client", /node_modules\/@aws-sdk\/client-lambda\//],
    ["cron-parser (schedules only)", /node_modules\/cron-parser\//],
    ["luxon (under cron-parser)", /node_modules\/luxon\//],
    ["Ajv (tenants' JSON Schemas)", /node_modules\/ajv\//],
    ["RE2 (their patterns)", /node_modules\/re2js\//],
    ["htmlparser2 (HTML documents)", /node_modules\/(htmlparser2|entities|domhandler)\//],
    ["exceljs (spreadsheets)", /node_modules\/(exceljs|jszip|archiver)\//],
    [
      "web_fetch's page reader (linkedom, Readability, Turndown: only a step that reads a page)",
      /node_modules\/(linkedom|@mozilla\/readability|turndown|@mixmark-io\/domino)\/|packages\/core\/src\/tools\/web\/(web-fetch-run|page-markdown)\.ts/,
    ],
    [
      "the services only the API uses",
      /packages\/core\/src\/service\/(schedules|triggers|api-keys|llm-traces|events|retry)\.ts/,
    ],
    [
      "the planner (prompts, answer schemas: only a step that plans)",
      /packages\/core\/src\/planning\/(planner|prompts|plan-schema|tool-params)\.ts/,
    ],
    [
      "the plan checker (only a step that forks or starts a task with a plan)",
      /packages\/core\/src\/plan\/(validate|control-flow|parameters-check|stackvm-compat|tool-check)\.ts/,
    ],
    [
      "code_task's loop (only a step that calls it)",
      /packages\/core\/src\/tools\/code-(task-run|prompts)\.ts/,
    ],
    [
      "an LLM call's work (retries, records, answers, repair rounds, JSON Schemas from zod: only a step that calls the LLM)",
      /packages\/core\/src\/llm\/(session-calls|call|answers|repair|extract-json|json-schema|context-fit)\.ts/,
    ],
    [
      "llm_generate's prompts and call (only a step that calls it)",
      /packages\/core\/src\/tools\/llm-generate-run\.ts/,
    ],
    [
      "tool descriptions for prompts and the API (only a step that plans)",
      /packages\/core\/src\/tools\/describe\.ts/,
    ],
    [
      "knowledge's own services (ingest, uploads)",
      /packages\/core\/src\/knowledge\/(ingest|knowledge-service|extract|html-text)\.ts/,
    ],
  ])("does not load %s until a step needs it", (_, pattern) => {
    expect(loadedSources().filter((s) => pattern.test(s))).toEqual([]);
  });

  it("does not import node:http or node:dns until a request needs them (node:http's ES module import loads Node's fetch, undici; the AWS SDK imports only node:https at start)", () => {
    expect(builtins.length).toBeGreaterThan(0);
    expect(builtins.filter((url) => url === "node:http" || url === "node:dns")).toEqual([]);
  });

  it("still carries the MCP, Bedrock, OpenAI and Lambda clients, cron-parser, the JSON Schema compiler, the planner, the plan checker, code_task's loop and an LLM call's work in chunks, for what needs them", () => {
    for (const pattern of [
      /node_modules\/ajv\//,
      /node_modules\/re2js\//,
      /node_modules\/cron-parser\//,
      /node_modules\/luxon\//,
      /node_modules\/@modelcontextprotocol\/sdk\//,
      /node_modules\/@aws-sdk\/client-bedrock-runtime\//,
      /node_modules\/openai\//,
      /node_modules\/@aws-sdk\/client-lambda\//,
      /packages\/core\/src\/planning\/planner\.ts/,
      /packages\/core\/src\/plan\/validate\.ts/,
      /packages\/core\/src\/tools\/code-task-run\.ts/,
      /packages\/core\/src\/llm\/session-calls\.ts/,
      /packages\/core\/src\/tools\/llm-generate-run\.ts/,
      /packages\/core\/src\/tools\/describe\.ts/,
      /node_modules\/linkedom\//,
      /node_modules\/@mozilla\/readability\//,
      /node_modules\/turndown\//,
      /packages\/core\/src\/tools\/web\/page-markdown\.ts/,
    ]) {
      expect(
        bundledSources().some((s) => pattern.test(s)),
        String(pattern),
      ).toBe(true);
    }
  });
});
