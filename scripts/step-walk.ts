/**
 * The walk of a step through core's files, message by message: which file each
 * function that runs belongs to, in the order they are entered. A diagnostic
 * for how the step reads (packages/core/src/vm/ARCHITECTURE.md), not a test.
 *
 * Core's sources (not its tests or `testing/`) are bundled with a call at the
 * start of every function, arrow, method and constructor that notes the
 * function's file; the in-memory system (`memorySystem`) then runs two tasks
 * and each queue message is walked on its own:
 *
 * - an ordinary task, two `assign`s (two step messages);
 * - a parallel group of four `llm_generate` calls and an `assign` that reads
 *   them (the step that starts the group, four members, the join).
 *
 * For each message: **entries** (functions entered), **stays** (runs of entries
 * in one file: a stay ends when a function of another file is entered),
 * **returns** (stays in a file the walk had already stayed in and left), and
 * **into the group** (stays in the parallel group's files, `vm/group*.ts`,
 * `vm/join.ts`, `vm/member.ts`, entered from another file); **runStep**
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

const root = join(import.meta.dirname, "..");
const core = join(root, "packages", "core", "src");

/** The statement every function starts with: `globalThis.__walk?.(file, name)`. */
function noteStatement(f: ts.NodeFactory, file: string, name = ""): ts.Statement {
  return f.createExpressionStatement(
    f.createCallChain(
      f.createPropertyAccessExpression(f.createIdentifier("globalThis"), "__walk"),
      f.createToken(ts.SyntaxKind.QuestionDotToken),
      undefined,
      [f.createStringLiteral(file), f.createStringLiteral(name)],
    ),
  );
}

/** The source with the note put at the start of each function's body. */
export function withNotes(source: string, file: string): string {
  const input = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const transformer: ts.TransformerFactory<ts.SourceFile> = (context) => {
    const f = context.factory;
    const note = (name?: string) => noteStatement(f, file, name);
    const visit = (node: ts.Node): ts.Node => {
      const visited = ts.visitEachChild(node, visit, context);
      if (ts.isArrowFunction(visited)) {
        const body = ts.isBlock(visited.body)
          ? f.updateBlock(visited.body, [note(), ...visited.body.statements])
          : f.createBlock([note(), f.createReturnStatement(visited.body)], true);
        return f.updateArrowFunction(
          visited,
          visited.modifiers,
          visited.typeParameters,
          visited.parameters,
          visited.type,
          visited.equalsGreaterThanToken,
          body,
        );
      }
      if (
        (ts.isFunctionDeclaration(visited) ||
          ts.isFunctionExpression(visited) ||
          ts.isMethodDeclaration(visited) ||
          ts.isConstructorDeclaration(visited) ||
          ts.isGetAccessorDeclaration(visited) ||
          ts.isSetAccessorDeclaration(visited)) &&
        visited.body
      ) {
        const name = ts.isFunctionDeclaration(visited) ? visited.name?.text : undefined;
        const body = f.updateBlock(visited.body, [note(name), ...visited.body.statements]);
        if (ts.isFunctionDeclaration(visited)) {
          return f.updateFunctionDeclaration(
            visited,
            visited.modifiers,
            visited.asteriskToken,
            visited.name,
            visited.typeParameters,
            visited.parameters,
            visited.type,
            body,
          );
        }
        if (ts.isFunctionExpression(visited)) {
          return f.updateFunctionExpression(
            visited,
            visited.modifiers,
            visited.asteriskToken,
            visited.name,
            visited.typeParameters,
            visited.parameters,
            visited.type,
            body,
          );
        }
        if (ts.isMethodDeclaration(visited)) {
          return f.updateMethodDeclaration(
            visited,
            visited.modifiers,
            visited.asteriskToken,
            visited.name,
            visited.questionToken,
            visited.typeParameters,
            visited.parameters,
            visited.type,
            body,
          );
        }
        if (ts.isConstructorDeclaration(visited)) {
          return f.updateConstructorDeclaration(
            visited,
            visited.modifiers,
            visited.parameters,
            body,
          );
        }
        if (ts.isGetAccessorDeclaration(visited)) {
          return f.updateGetAccessorDeclaration(
            visited,
            visited.modifiers,
            visited.name,
            visited.parameters,
            visited.type,
            body,
          );
        }
        return f.updateSetAccessorDeclaration(
          visited as ts.SetAccessorDeclaration,
          visited.modifiers,
          visited.name,
          visited.parameters,
          body,
        );
      }
      return visited;
    };
    return (sourceFile) => ts.visitNode(sourceFile, visit) as ts.SourceFile;
  };
  const [output] = ts.transform(input, [transformer]).transformed;
  return ts.createPrinter().printFile(output as ts.SourceFile);
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

/** The script the bundle runs: the two tasks, each message walked on its own. */
const DRIVER = `
import { CreateTaskInput } from "@stackvm/core/api-records";
import { FakeLlm, memorySystem } from "@stackvm/core/testing";
const walk = [];
let walking = false;
let runSteps = 0;
globalThis.__walk = (file, name) => {
  if (!walking) return;
  walk.push(file);
  if (name === "runStep") runSteps += 1;
};
const llm = new FakeLlm(() => "ok");
const sys = memorySystem({ llm });
const messages = [];
const drain = sys.queue.drain.bind(sys.queue);
sys.queue.drain = (handler, options) =>
  drain(async (message, ids) => {
    const body = JSON.parse(message.body);
    walk.length = 0;
    runSteps = 0;
    walking = true;
    try {
      await handler(message, ids);
    } finally {
      walking = false;
      messages.push({ task: current, kind: body.kind ?? "step", member: body.member, runSteps, files: [...walk] });
    }
  }, options);
let current = "";
const call = (prompt, out) => ({
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: out },
});
const tasks = {
  ordinary: [
    { seq_no: 0, type: "assign", parameters: { greeting: "hello" } },
    { seq_no: 1, type: "assign", parameters: { final_answer: "\${greeting}, world" } },
  ],
  group: [
    { seq_no: 0, ...call("one", "a") },
    { seq_no: 1, ...call("two", "b") },
    { seq_no: 2, ...call("three", "c") },
    { seq_no: 3, ...call("four", "d") },
    { seq_no: 4, type: "assign", parameters: { final_answer: "\${a} \${b} \${c} \${d}" } },
  ],
};
for (const [name, plan] of Object.entries(tasks)) {
  current = name;
  const created = await sys.tasks.create("walk", CreateTaskInput.parse({ plan }));
  await sys.drain();
  const task = await sys.tasks.get("walk", created.task.task_id);
  if (task.status !== "completed") throw new Error(name + " ended " + task.status);
}
process.stdout.write(JSON.stringify(messages));
`;

const isGroupFile = (file: string) => /^vm\/(group[^/]*|join|member)\.ts$/.test(file);

/** Entries, stays, returns and stays into the group's files of one message's walk. */
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
    stdin: { contents: DRIVER, resolveDir: root, loader: "ts" },
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
