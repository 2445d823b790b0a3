/**
 * Where a function's cold start spends its time running code: the function is
 * bundled as `npm run bundle` bundles it (scripts/bundles.ts) but unminified,
 * so that esbuild's `// path` comment stands before each module's top-level
 * code; a call that notes the time goes after each such comment, and fresh
 * `node` processes import the entry. A module's time is from its note to the
 * next one: its top-level code and everything that code calls (building zod
 * schemas, constructing clients, reading the settings), not the parsing of the
 * source, which happens before any of it runs. The rest of the import (parsing
 * and compiling the sources, Node's own modules) is the difference between the
 * import's total and the sum.
 *
 * A diagnostic, not a benchmark: unminified code parses slower than what is
 * deployed, and the notes add a little time of their own. Compare modules
 * within one run; `npm run bundle` is what measures the cold start.
 *
 * Usage: `npm run bundle:profile [-- worker] [--runs 10] [--top 25]`
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { bundle, entries, inFreshNode, npmPackageOf, outDir, wholeNumberOption } from "./bundles";

const root = join(import.meta.dirname, "..");

/** Puts a note of the time after each of esbuild's `// path` module comments. */
function addNotes(dir: string): void {
  const files = [
    join(dir, "index.mjs"),
    ...readdirSync(join(dir, "chunks")).map((f) => join(dir, "chunks", f)),
  ];
  for (const file of files) {
    const text = readFileSync(file, "utf8").replace(
      /^\/\/ (\S+\/\S+)$/gm,
      (comment, path: string) => `${comment}\nglobalThis.__startNote?.(${JSON.stringify(path)});`,
    );
    writeFileSync(file, text);
  }
}

/** One fresh process: the import's milliseconds and each module's top-level milliseconds. */
function profileOnce(entry: string): { total: number; modules: [string, number][] } {
  const script = `
const spent = new Map(); let last = null; let lastAt = 0;
globalThis.__startNote = (path) => {
  const now = performance.now();
  if (last !== null) spent.set(last, (spent.get(last) ?? 0) + now - lastAt);
  last = path; lastAt = now;
};
const started = performance.now();
await import(${JSON.stringify(pathToFileURL(entry).href)});
globalThis.__startNote(null);
process.stdout.write(JSON.stringify({ total: performance.now() - started, modules: [...spent] }));`;
  const run = inFreshNode(script);
  if ("error" in run) throw new Error(`the import failed: ${run.error}`);
  return JSON.parse(run.stdout);
}

/** A module's package (`zod`, `@smithy/core`), or its path in the project. */
const owner = (path: string) => npmPackageOf(path) ?? path.replace(/^(\.\.\/)+/, "");

async function main() {
  const argv = process.argv.slice(2);
  const name = argv[0] && !argv[0].startsWith("--") ? argv[0] : "worker";
  const entry = entries.find((e) => e.name === name);
  if (entry === undefined) {
    console.error(`no function '${name}'; one of: ${entries.map((e) => e.name).join(", ")}`);
    process.exit(2);
  }
  const runs = wholeNumberOption(argv, "--runs", 10, 100);
  const top = wholeNumberOption(argv, "--top", 25, 100);
  const dir = join(outDir, `profile-${name}`);
  const built = await bundle(
    name,
    { entryPoints: [join(root, entry.file)] },
    entry.external,
    dir,
    false,
  );
  addNotes(dir);
  const byOwner = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < runs; i++) {
    const run = profileOnce(built.entry);
    total += run.total;
    for (const [path, ms] of run.modules) {
      byOwner.set(owner(path), (byOwner.get(owner(path)) ?? 0) + ms);
    }
  }
  const ran = [...byOwner.values()].reduce((a, b) => a + b, 0);
  console.log(
    `${name}, unminified, mean of ${runs} cold imports: ${(total / runs).toFixed(1)} ms in all, ${(ran / runs).toFixed(1)} ms running modules' top-level code (the rest: parsing, compiling, Node's own modules)\n`,
  );
  for (const [path, ms] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(ms / runs).toFixed(2).padStart(8)} ms  ${path}`);
  }
}

await main();
