/**
 * Builds each Lambda function's deployed package for its own architecture
 * (scripts/function-packages.ts: the bundle and what it installs, as SST
 * builds it) and prints its sizes against Lambda's limits and its cold import
 * beside the floor measured in the same run:
 *
 * - the floor: Hono, zod and the DynamoDB and SQS clients serving one
 *   request, the least any function of this project can load (see
 *   `mandatedFloor` in scripts/bundles.ts); each function's goal is a multiple
 *   of it (`importGoal`: the worker and the sandbox 1.5x, the api 2x);
 * - a bare Hono hello-world, printed for reference.
 *
 * Cold import: a fresh `node` process imports the function's entry from its
 * package folder (its installed packages resolve from there, nothing from the
 * project) and reports how long the import took (chunks it imports statically
 * included, dynamic ones not: they load on first use); the median of several
 * runs (`--runs N`, default 7), the function and the baselines measured in turn
 * so that ratios compare runs under the same load (each run's ratio to the
 * floor, then their median: see `coldImport`). Both its wall time and the
 * CPU time of the process are printed; the goals are checked on CPU time, the
 * work of the import: a Lambda instance does it on a core of its own, while
 * here the wall time also counts waits for a core. For the worker, also one
 * whole step in a fresh process (scripts/worker-step-probe.ts): import, then a
 * task's first step through the worker's handler on the in-memory ports.
 *
 * "bundle" is every file of the bundle; "at start" what its cold start loads;
 * "unzipped" and "zip" the whole package as Lambda receives it. The bundle's
 * whole size has no goal of its own: with code splitting a cold start loads
 * only "at start", and the package is checked against Lambda's limits. The load
 * average is printed with the figures: on a shared machine, ratios to the
 * floor of the same run are what compares.
 *
 * Usage: `npm run bundle [-- --runs 11]`
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import {
  type Bundle,
  bundle,
  bundleSource,
  entries,
  helloWorld,
  importOnce,
  mandatedFloor,
  requestsOnce,
  stepOnce,
  wholeNumberOption,
} from "./bundles";
import {
  buildPackage,
  type FunctionPackage,
  mb,
  packageProblems,
  packagesDir,
} from "./function-packages";

const root = join(import.meta.dirname, "..");

/**
 * Medians of wall and CPU milliseconds: the file's, and the two baselines'
 * measured in turn with it; and the medians of the file's ratios to the floor
 * of the same run (wall and CPU), which the goals are checked on.
 */
type Timing =
  | {
      ms: number;
      cpuMs: number;
      helloMs: number;
      helloCpuMs: number;
      floorMs: number;
      floorCpuMs: number;
      ratio: number;
      cpuRatio: number;
    }
  | { error: string };

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/**
 * Median cold import of `file`, and of the two baselines measured in turn with
 * it, so that the ratios compare runs made under the same load. The ratio to
 * the floor is the median of each run's own ratio (the file's import over the
 * floor's in the same run), not the ratio of the two medians: the machine's
 * speed drifts between runs (the floor's median moved from 116 to 161 ms
 * between two runs of the script on this 2-core machine), and pairing cancels
 * the drift. Five runs of 11 imports each, the worker against the floor: paired
 * ratios 1.475 to 1.505, ratios of medians 1.481 to 1.562. Which of the two
 * goes first alternates, so that neither gains from its place.
 */
function coldImport(file: string, hello: string, floor: string, runs: number): Timing {
  const times: number[] = [];
  const helloTimes: number[] = [];
  const floorTimes: number[] = [];
  const cpu: [number[], number[], number[]] = [[], [], []];
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let i = 0; i < runs; i++) {
    const baseline = importOnce(hello);
    // The floor and the file take turns going first: a process measured right
    // after another runs on a warmer machine (the floor measured against itself,
    // always second, came out 0.96x).
    const floorFirst = i % 2 === 0;
    const first = importOnce(floorFirst ? floor : file);
    const second = importOnce(floorFirst ? file : floor);
    const [least, measured] = floorFirst ? [first, second] : [second, first];
    if ("error" in measured) return measured;
    if ("error" in baseline) return { error: `the hello-world does not import: ${baseline.error}` };
    if ("error" in least) return { error: `the mandated floor does not import: ${least.error}` };
    times.push(measured.ms);
    helloTimes.push(baseline.ms);
    floorTimes.push(least.ms);
    cpu[0].push(measured.cpuMs);
    cpu[1].push(baseline.cpuMs);
    cpu[2].push(least.cpuMs);
    ratios.push(measured.ms / least.ms);
    cpuRatios.push(measured.cpuMs / least.cpuMs);
  }
  return {
    ms: median(times),
    cpuMs: median(cpu[0]),
    helloMs: median(helloTimes),
    helloCpuMs: median(cpu[1]),
    floorMs: median(floorTimes),
    floorCpuMs: median(cpu[2]),
    ratio: median(ratios),
    cpuRatio: median(cpuRatios),
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const times = (ratio: number) => (Number.isNaN(ratio) ? "-" : `${ratio.toFixed(2)}x`);

function row(name: string, built: Bundle, timing: Timing, pkg?: FunctionPackage): string[] {
  const ok = "ms" in timing;
  return [
    name,
    pkg?.arch ?? "",
    kb(built.bytes),
    kb(built.eagerBytes),
    pkg ? mb(pkg.unzippedBytes) : "",
    pkg ? `${mb(pkg.zipBytes)}${pkg.zipLimited ? "" : " (S3)"}` : "",
    ok ? `${timing.ms.toFixed(1)} ms` : "import failed",
    times(ok ? timing.ratio : Number.NaN),
    ok ? `${timing.cpuMs.toFixed(1)} ms` : "",
    times(ok ? timing.cpuRatio : Number.NaN),
    built.heaviest.map(([p, bytes]) => `${p} ${kb(bytes)}`).join(", "),
  ];
}

function print(rows: string[][]) {
  const header = [
    "function",
    "arch",
    "bundle",
    "at start",
    "unzipped",
    "zip",
    "cold import",
    "vs floor",
    "its CPU",
    "vs floor",
    "heaviest at start",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  for (const cells of [header, ...rows]) {
    console.log(
      cells
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
  }
}

/**
 * Bundles `scripts/{probe}.ts` like the function `name` and runs `once` on it
 * `runs` times, each beside a cold import of the floor: the results and the
 * floor's median wall time, or the error of the first run that failed. `T` is
 * an object of times, never one with an `error`.
 */
async function probeRuns<T>(
  floor: string,
  runs: number,
  name: string,
  probe: string,
  once: (file: string) => T | { error: string },
): Promise<{ results: T[]; floorMs: number } | { error: string }> {
  const bundled = await bundle(
    probe,
    { entryPoints: [join(root, `scripts/${probe}.ts`)] },
    entries.find((e) => e.name === name)?.external,
    join(packagesDir, probe),
  );
  const results: T[] = [];
  const floors: number[] = [];
  for (let i = 0; i < runs; i++) {
    const least = importOnce(floor);
    const result = once(bundled.entry);
    if ("error" in (result as object)) return result as { error: string };
    if ("ms" in least) floors.push(least.ms);
    results.push(result as T);
  }
  return { results, floorMs: median(floors) };
}

async function main() {
  const runs = wholeNumberOption(process.argv.slice(2), "--runs", 7, 101);
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  console.log(
    `node ${process.version}, esbuild minified ESM for node24 with code splitting, median of ${runs} cold imports; 'vs floor' is the median of each run's ratio to the floor's import beside it (they take turns going first); load average ${load()}\n`,
  );

  const hello = await bundleSource("hello-world", helloWorld);
  const floor = await bundleSource("mandated-floor", mandatedFloor);
  const baselines = coldImport(floor.entry, hello.entry, floor.entry, runs);
  if ("error" in baselines) throw new Error(baselines.error);
  const rows: string[][] = [
    row("hello-world (Hono)", hello, {
      ...baselines,
      ms: baselines.helloMs,
      cpuMs: baselines.helloCpuMs,
      ratio: baselines.helloMs / baselines.floorMs,
      cpuRatio: baselines.helloCpuMs / baselines.floorCpuMs,
    }),
    row("floor (Hono+zod+DynamoDB+SQS)", floor, baselines),
  ];
  const failures: string[] = [];

  for (const entry of entries) {
    let pkg: FunctionPackage;
    try {
      pkg = await buildPackage(entry);
    } catch (error) {
      failures.push(`${entry.name}: no package: ${(error as Error).message.split("\n")[0]}`);
      continue;
    }
    const timing = coldImport(pkg.bundle.entry, hello.entry, floor.entry, runs);
    rows.push(row(entry.name, pkg.bundle, timing, pkg));
    failures.push(...packageProblems(pkg));
    if ("error" in timing) failures.push(`${entry.name}: import failed: ${timing.error}`);
    // The goal is checked on CPU time: the work of the import, which a Lambda
    // instance does on a core of its own; here the wall time also counts the
    // waits for a core that other work on the machine causes (both are printed).
    else if (entry.importGoal !== undefined && timing.cpuRatio > entry.importGoal) {
      failures.push(
        `${entry.name}: cold import ${times(timing.cpuRatio)} the floor's CPU time, over its goal of ${entry.importGoal}x`,
      );
    }
  }
  print(rows);

  // The worker's first step and the API's first requests (its routes load on
  // their group's first request, so a cold start's first answer pays for its
  // group), each in a fresh process beside the floor's cold import.
  const steps = await probeRuns(floor.entry, runs, "worker", "worker-step-probe", stepOnce);
  if ("error" in steps) failures.push(`worker step: ${steps.error}`);
  else {
    const importMs = median(steps.results.map((s) => s.importMs));
    const stepMs = median(steps.results.map((s) => s.stepMs));
    const ms = median(steps.results.map((s) => s.ms));
    console.log(
      `\nworker, first step in a fresh process (in-memory ports): import ${importMs.toFixed(1)} ms + step ${stepMs.toFixed(1)} ms = ${ms.toFixed(1)} ms, ${times(ms / steps.floorMs)} the floor's cold import (${steps.floorMs.toFixed(1)} ms)`,
    );
  }
  const requests = await probeRuns(floor.entry, runs, "api", "api-request-probe", requestsOnce);
  if ("error" in requests) failures.push(`api first requests: ${requests.error}`);
  else {
    const importMs = median(requests.results.map((r) => r.importMs));
    const startTaskMs = median(requests.results.map((r) => r.startTaskMs));
    const openapiMs = median(requests.results.map((r) => r.openapiMs));
    console.log(
      `api, first requests in a fresh process (in-memory ports): import ${importMs.toFixed(1)} ms, then POST /v1/tasks ${startTaskMs.toFixed(1)} ms (${times((importMs + startTaskMs) / requests.floorMs)} the floor's cold import, ${requests.floorMs.toFixed(1)} ms, with the import), then GET /openapi.json ${openapiMs.toFixed(1)} ms (every other group and the document)`,
    );
  }
  console.log(`\nload average at the end: ${load()}; packages in ${packagesDir}`);

  if (failures.length > 0) {
    console.log(`\nTargets missed:\n${failures.map((f) => `- ${f}`).join("\n")}`);
    process.exitCode = 1;
  } else {
    console.log(
      "\nTargets met: every package within Lambda's limits; cold imports within their goals (worker and sandbox 1.5x the floor, api 2x).",
    );
  }
}

await main();
