/**
 * `npm run eval`: runs the dataset's cases as ordinary tasks against a model,
 * once planned up front and once adaptively, and prints a table per mode (per
 * case and in total: plan valid on the first try, planner attempts, plan
 * updates, completed, right, LLM calls, tokens, cost, wall time) and the two
 * modes side by side; saves each mode's run as JSON; compares two saved runs.
 * The guide is docs/eval.md.
 *
 *   npm run eval                                 # the model of OPENAI_BASE_URL/LLM_MODEL (or Bedrock), in-process stack
 *   npm run eval -- --scripted                   # the dataset's own scripted answers (no model needed)
 *   npm run eval -- --planning adaptive          # one planning mode only (default: both)
 *   npm run eval -- --url http://localhost:3000  # a running stack (STACKVM_API_KEY or .stackvm/api-key)
 *   npm run eval -- --compare a.json b.json
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ApiClient } from "./api";
import { evalApiKey, UsageError } from "./api-key";
import { type EvalCase, fillPlaceholders, loadCases, type Need, PlanningMode } from "./dataset";
import { startEvalStack } from "./local";
import { type CaseResult, totalsOf } from "./metrics";
import { compareTable, type EvalRun, modesTable, runTable } from "./report";
import { runCases } from "./runner";

const root = resolve(import.meta.dirname, "../..");

const USAGE = `npm run eval -- [options]
  --scripted            answer from the dataset's scripts instead of a model (what npm test runs)
  --url URL             run against a running stack (key: --api-key, STACKVM_API_KEY or .stackvm/api-key)
  --api-key KEY         the running stack's API key
  --fixture-server      with --url: the stack reaches this machine's loopback (STACKVM_OPEN_PRIVATE_RANGES=127.0.0.1)
  --cases PATH          a case file or folder (default test/eval/cases)
  --only IDS            only these cases (comma-separated ids or features)
  --planning MODE       up_front, adaptive or both (default both: each case runs in each mode)
  --concurrency N       cases at once (default 2; 8 scripted)
  --case-timeout S      seconds a case may run before it is cancelled (default 600)
  --label TEXT          what this run evaluates (default the model names)
  --out FILE            where to save the run (default .stackvm/eval/<timestamp>.json; -<mode> added per mode)
  --compare A B         print two saved runs side by side`;

const NO_MODEL =
  "no LLM is configured: set OPENAI_BASE_URL (and LLM_MODEL) for an OpenAI-compatible server, OPENAI_API_KEY for OpenAI, " +
  "or LLM_PROVIDER=bedrock with LLM_MODEL (docs/eval.md); or run the dataset's scripted answers with --scripted";

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      scripted: { type: "boolean", default: false },
      url: { type: "string" },
      "api-key": { type: "string" },
      "fixture-server": { type: "boolean", default: false },
      cases: { type: "string" },
      only: { type: "string" },
      planning: { type: "string", default: "both" },
      concurrency: { type: "string" },
      "case-timeout": { type: "string" },
      label: { type: "string" },
      out: { type: "string" },
      compare: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.compare) {
    if (positionals.length !== 2)
      throw new UsageError("--compare takes two saved runs: --compare a.json b.json");
    const [a, b] = await Promise.all(positionals.map(readRun));
    process.stdout.write(`${compareTable(a!, b!)}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const modes = planningModes(values.planning);
  const concurrency = positiveInt(values.concurrency, values.scripted ? 8 : 2, "--concurrency");
  const caseTimeoutMs = positiveInt(values["case-timeout"], 600, "--case-timeout") * 1000;
  let cases = await loadCases(values.cases ? resolve(values.cases) : undefined);
  if (values.only) {
    const wanted = new Set(values.only.split(",").map((s) => s.trim()));
    cases = cases.filter((c) => wanted.has(c.id) || wanted.has(c.feature));
    if (cases.length === 0)
      throw new UsageError(`--only ${values.only} matches no case id or feature`);
  }

  const started = new Date();
  const runId = Math.random().toString(36).slice(2, 8);
  let api: ApiClient;
  let fixtureUrl: string | undefined;
  let available: Set<Need>;
  let llm: Record<string, unknown> | null = null;
  let stackLabel: string;
  let stop = async () => {};
  let resetScript = () => {};
  if (values.url) {
    if (values.scripted) throw new UsageError("--scripted starts its own stack: leave out --url");
    const keyFile = join(resolve(root, process.env.STACKVM_DATA_DIR ?? ".stackvm"), "api-key");
    const key = await evalApiKey(values.url, values["api-key"], process.env, keyFile);
    api = new ApiClient(values.url.replace(/\/+$/, ""), key);
    available = new Set<Need>();
    if (values["fixture-server"]) {
      const { startFixtureServer } = await import("./fixture-server");
      const fixture = await startFixtureServer();
      fixtureUrl = fixture.url;
      available.add("fixture_server");
      stop = fixture.close;
    }
    stackLabel = values.url;
  } else {
    const env = process.env;
    if (
      !values.scripted &&
      !env.OPENAI_BASE_URL &&
      !env.OPENAI_API_KEY &&
      env.LLM_PROVIDER !== "bedrock"
    ) {
      throw new UsageError(NO_MODEL);
    }
    const local = await startEvalStack({
      env: process.env,
      ...(values.scripted
        ? { scripted: (url: string) => cases.map((c) => fillPlaceholders(c, { fixture_url: url })) }
        : {}),
      logLevel: (process.env.LOG_LEVEL as never) ?? "error",
    });
    if (!local.llm) {
      await local.stop();
      throw new UsageError(NO_MODEL);
    }
    ({ api, llm, fixtureUrl, available } = local);
    stop = local.stop;
    resetScript = local.resetScript;
    stackLabel = "in-process local stack (in memory)";
  }
  const label = values.label ?? (values.scripted ? "scripted" : (modelLabel(llm) ?? stackLabel));
  process.stdout.write(
    `eval ${runId}: ${cases.length} cases, ${concurrency} at once, planned ${modes.join(" and ")}, on ${stackLabel}\n  model: ${label}\n`,
  );

  const byMode = new Map<PlanningMode, CaseResult[]>();
  const runs: { run: EvalRun; out: string }[] = [];
  try {
    const filled: EvalCase[] = cases.map((c) =>
      fixtureUrl ? fillPlaceholders(c, { fixture_url: fixtureUrl }) : c,
    );
    // One mode after the other: the scripted model tells a case's requests apart by its goal alone.
    for (const planning of modes) {
      resetScript();
      process.stdout.write(`\nplanned ${planning}:\n`);
      const modeStarted = new Date();
      const results = await runCases(filled, {
        api,
        runId,
        planning,
        concurrency,
        caseTimeoutMs,
        available,
        onResult: (r) =>
          process.stdout.write(
            `  ${r.right ? "right" : r.status === "skipped" ? "skip " : "WRONG"}  ${r.id} (${(r.wall_ms / 1000).toFixed(1)} s)${r.right ? "" : `: ${r.reason.slice(0, 120)}`}\n`,
          ),
      });
      byMode.set(planning, results);
      runs.push({
        run: {
          version: 1,
          run_id: runId,
          label: `${label}, planned ${planning}`,
          planning,
          llm,
          stack: stackLabel,
          started_at: modeStarted.toISOString(),
          finished_at: new Date().toISOString(),
          totals: totalsOf(results),
          results,
        },
        out: outFile(values.out, started, modes.length > 1 ? planning : undefined),
      });
    }
  } finally {
    await stop();
  }
  for (const { run, out } of runs) {
    await mkdir(resolve(out, ".."), { recursive: true });
    await writeFile(out, `${JSON.stringify(run, null, 2)}\n`);
    process.stdout.write(`\nplanned ${run.planning}:\n${runTable(run.results)}\n\nsaved ${out}\n`);
  }
  const upFront = byMode.get("up_front");
  const adaptive = byMode.get("adaptive");
  if (upFront && adaptive)
    process.stdout.write(
      `\nboth modes (up = up_front, ad = adaptive):\n${modesTable(upFront, adaptive)}\n`,
    );
  return 0;
}

/** `--planning`: one mode, or both in the order they run. */
function planningModes(text: string | undefined): PlanningMode[] {
  if (text === undefined || text === "both") return ["up_front", "adaptive"];
  const mode = PlanningMode.safeParse(text);
  if (!mode.success)
    throw new UsageError(`--planning is up_front, adaptive or both, not '${text}'`);
  return [mode.data];
}

/** Where a mode's run is saved: `--out` or a timestamped file, with the mode in its name when both run. */
function outFile(out: string | undefined, started: Date, mode: PlanningMode | undefined): string {
  const file = out
    ? resolve(out)
    : join(root, ".stackvm", "eval", `${started.toISOString().replace(/[:.]/g, "-")}.json`);
  if (!mode) return file;
  return file.endsWith(".json") ? `${file.slice(0, -5)}-${mode}.json` : `${file}-${mode}`;
}

/** The models a run evaluates, from the stack's banner. */
function modelLabel(llm: Record<string, unknown> | null): string | null {
  const models = llm?.models as Record<string, string> | undefined;
  if (!models) return null;
  const distinct = [...new Set([models.generation, models.planner])];
  return `${distinct.join(" / ")} at ${String(llm?.endpoint)}`;
}

async function readRun(path: string): Promise<EvalRun> {
  const run = JSON.parse(await readFile(resolve(path), "utf8")) as EvalRun;
  if (run?.version !== 1 || !Array.isArray(run.results))
    throw new UsageError(`${path} is not a saved eval run`);
  return run;
}

function positiveInt(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number from 1, got ${text}`);
  return n;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      error instanceof UsageError
        ? `eval: ${error.message}\n\n${USAGE}\n`
        : `eval failed: ${(error as Error).stack}\n`,
    );
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
