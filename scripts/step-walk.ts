/**
 * The walk of a step through core's files, message by message: which file each
 * function that runs belongs to, in the order they are entered. A diagnostic
 * for how the step reads (packages/core/src/vm/ARCHITECTURE.md), not a test.
 *
 * Core's sources (not its tests or `testing/`) are bundled with a call at the
 * start of every function, arrow, method and constructor that notes the
 * function's file; the in-memory system (`memorySystem`) then runs two tasks
 * (scripts/step-walk-run.ts) and each queue message is walked on its own:
 *
 * - an ordinary task, two `assign`s (two step messages);
 * - a parallel group of four `llm_generate` calls and an `assign` that reads
 *   them (the step that starts the group, four members, the join).
 *
 * For each message: **entries** (functions entered), **stays** (runs of entries
 * in one file: a stay ends when a function of another file is entered),
 * **returns** (stays in a file the walk had already stayed in and left), and
 * **into the group** (stays in the parallel group's files, `isGroupFile`,
 * entered from another file); **runStep**
 * counts the calls of `runStep` (more than one is the step calling itself).
 *
 * Usage: `npm run walk [-- --under vm/] [--files]`: `--under` keeps only the
 * files below a folder of core's (the others' entries are left out of the
 * walk, so a stay in `vm/` goes on through what it calls outside it);
 * `--files` lists each message's stays.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import ts from "typescript";
import { isGroupFile } from "../test/support/import-graph";

const root = join(import.meta.dirname, "..");
const core = join(root, "packages", "core", "src");

/**
 * The source with `globalThis.__walk?.(file, name)` put at the start of each
 * function's body (an arrow's expression body becomes a block that returns
 * it); `name` is a declared function's, else empty.
 */
export function withNotes(source: string, file: string): string {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const note = (name = "") =>
    `globalThis.__walk?.(${JSON.stringify(file)}, ${JSON.stringify(name)});`;
  const inserts: { at: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const body = node.body as ts.ConciseBody;
      if (ts.isBlock(body)) {
        const name = ts.isFunctionDeclaration(node) ? node.name?.text : undefined;
        inserts.push({ at: body.getStart() + 1, text: ` ${note(name)}` });
      } else {
        inserts.push({ at: body.getStart(), text: `{ ${note()} return (` });
        inserts.push({ at: body.getEnd(), text: "); }" });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  let noted = source;
  for (const { at, text } of inserts.sort((x, y) => y.at - x.at)) {
    noted = noted.slice(0, at) + text + noted.slice(at);
  }
  return noted;
}

/** Core's sources get their notes; every npm package stays outside the bundle. */
const notes: Plugin = {
  name: "walk-notes",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@stackvm/") ? undefined : { path: args.path, external: true },
    );
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const file = relative(core, args.path);
      if (file.startsWith("..") || file.startsWith("testing") || file.endsWith(".test.ts")) {
        return undefined;
      }
      return { contents: withNotes(readFileSync(args.path, "utf8"), file), loader: "ts" };
    });
  },
};

/** Entries, stays, returns and entries into the group's files of one message's walk. */
export function measure(files: string[]) {
  const stays: string[] = [];
  for (const file of files) if (stays.at(-1) !== file) stays.push(file);
  const seen = new Set<string>();
  let returns = 0;
  for (const file of stays) {
    if (seen.has(file)) returns += 1;
    seen.add(file);
  }
  const intoGroup = stays.filter(
    (file, i) => isGroupFile(file) && (i === 0 || !isGroupFile(stays[i - 1] as string)),
  ).length;
  return { entries: files.length, stays, returns, intoGroup };
}

/** One queue message's walk: the task, the message's kind, its calls of `runStep`, the files entered. */
export interface Walked {
  task: string;
  kind: string;
  member?: number;
  runSteps: number;
  files: string[];
}

/** Bundles core with its notes and runs the two tasks in a fresh process; answers each message's walk. */
export async function walkMessages(): Promise<Walked[]> {
  // Inside the project, so that the packages left outside the bundle resolve from its node_modules.
  mkdirSync(join(root, ".stackvm"), { recursive: true });
  const dir = mkdtempSync(join(root, ".stackvm", "walk-"));
  const out = join(dir, "walk.mjs");
  await build({
    entryPoints: [join(import.meta.dirname, "step-walk-run.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    outfile: out,
    plugins: [notes],
    logLevel: "error",
  });
  const run = spawnSync(process.execPath, [out], { cwd: root, encoding: "utf8", timeout: 120_000 });
  rmSync(dir, { recursive: true, force: true });
  if (run.status !== 0) throw new Error(`the walk's run exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as Walked[];
}

async function main() {
  const walked = await walkMessages();
  const listFiles = process.argv.includes("--files");
  const underAt = process.argv.indexOf("--under");
  const under = underAt === -1 ? "" : (process.argv[underAt + 1] ?? "");
  console.log(
    `the walk through ${under === "" ? "core's files" : `core's ${under} files`}, each queue message on its own`,
  );
  console.log("task      message      runStep  entries  stays  returns  into the group");
  for (const message of walked) {
    const m = measure(message.files.filter((file) => file.startsWith(under)));
    const label = message.kind === "member" ? `member ${message.member}` : message.kind;
    console.log(
      `${message.task.padEnd(9)} ${label.padEnd(12)} ${String(message.runSteps).padStart(7)}  ${String(m.entries).padStart(7)}  ${String(m.stays.length).padStart(5)}  ${String(m.returns).padStart(7)}  ${String(m.intoGroup).padStart(14)}`,
    );
    if (listFiles) console.log(`  ${m.stays.join(" > ")}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
