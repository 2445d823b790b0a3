/**
 * Prints each Lambda function's bundle size and cold import time, beside two
 * baselines measured the same way in the same run:
 *
 * - a bare Hono hello-world, the target's baseline (cold import within 3x);
 * - the mandated floor: Hono, zod and the DynamoDB and SQS clients serving one
 *   request, the least any function of this project can load (see
 *   `mandatedFloor` in scripts/bundles.ts).
 *
 * Cold import time: a fresh `node` process imports the entry and reports how
 * long the import took (chunks it imports statically included, dynamic ones
 * not: they load on first use); the median of several runs (`--runs N`,
 * default 7), the three measured in turn so that ratios compare runs under the
 * same load. "bundle" is every file of a function; "at start" what its cold
 * start loads.
 *
 * Usage: `npm run bundle [-- --runs 11]`
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type Bundle,
  bundle,
  bundleSource,
  entries,
  helloWorld,
  importOnce,
  importTargetRatio,
  mandatedFloor,
  outDir,
} from "./bundles";

const root = join(import.meta.dirname, "..");

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

type Timing = { ms: number; helloMs: number; floorMs: number } | { error: string };

/**
 * Median cold import of `file`, and of the two baselines measured in turn with
 * it, so that the ratios compare runs made under the same load.
 */
function coldImport(file: string, hello: string, floor: string, runs: number): Timing {
  const times: number[] = [];
  const helloTimes: number[] = [];
  const floorTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const baseline = importOnce(hello);
    const least = importOnce(floor);
    const measured = importOnce(file);
    if ("error" in measured) return measured;
    if ("error" in baseline) return { error: `the hello-world does not import: ${baseline.error}` };
    if ("error" in least) return { error: `the mandated floor does not import: ${least.error}` };
    times.push(measured.ms);
    helloTimes.push(baseline.ms);
    floorTimes.push(least.ms);
  }
  return { ms: median(times), helloMs: median(helloTimes), floorMs: median(floorTimes) };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const times = (ratio: number) => (Number.isNaN(ratio) ? "-" : `${ratio.toFixed(1)}x`);

function row(name: string, built: Bundle, timing: Timing): string[] {
  const ok = "ms" in timing;
  return [
    name,
    kb(built.bytes),
    kb(built.eagerBytes),
    ok ? `${timing.ms.toFixed(1)} ms` : "import failed",
    times(ok ? timing.ms / timing.helloMs : Number.NaN),
    times(ok ? timing.ms / timing.floorMs : Number.NaN),
    built.heaviest.map(([pkg, bytes]) => `${pkg} ${kb(bytes)}`).join(", "),
  ];
}

async function main() {
  const runs = parseRuns(process.argv.slice(2));
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  console.log(
    `node ${process.version}, esbuild minified ESM for node24 with code splitting, median of ${runs} cold imports\n`,
  );

  const hello = await bundleSource("hello-world", helloWorld);
  const floor = await bundleSource("mandated-floor", mandatedFloor);
  const baselines = coldImport(floor.entry, hello.entry, floor.entry, runs);
  if ("error" in baselines) throw new Error(baselines.error);
  const rows: string[][] = [
    row("hello-world (Hono)", hello, { ...baselines, ms: baselines.helloMs }),
    row("floor (Hono+zod+DynamoDB+SQS)", floor, baselines),
  ];
  const failures: string[] = [];

  for (const entry of entries) {
    let built: Bundle;
    try {
      built = await bundle(entry.name, { entryPoints: [join(root, entry.file)] }, entry.external);
    } catch (error) {
      failures.push(`${entry.name}: does not bundle: ${(error as Error).message.split("\n")[0]}`);
      continue;
    }
    const timing = coldImport(built.entry, hello.entry, floor.entry, runs);
    rows.push(row(entry.name, built, timing));
    if (entry.sizeTargetMb !== undefined && built.bytes > entry.sizeTargetMb * 1024 * 1024) {
      failures.push(`${entry.name}: bundle ${kb(built.bytes)} is over ${entry.sizeTargetMb} MB`);
    }
    if ("error" in timing) failures.push(`${entry.name}: import failed: ${timing.error}`);
    else if (timing.ms / timing.helloMs > importTargetRatio) {
      failures.push(
        `${entry.name}: cold import ${times(timing.ms / timing.helloMs)} the hello-world's, over ${importTargetRatio}x (${times(timing.ms / timing.floorMs)} the mandated floor's)`,
      );
    }
  }

  const header = [
    "function",
    "bundle",
    "at start",
    "cold import",
    "vs hello",
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
