/**
 * The import graph of the workspace's source files, as the architecture test reads
 * it: dpdm parses and resolves every import (type-only ones too, since a type cycle
 * ties files as tightly as a value cycle), and two checks read the graph: the
 * files that import themselves back through others, and the imports in core that
 * point up its layers. The graph of values only (what runs) is for the check
 * that the step's commit tail leads back into no group file.
 */
import { existsSync, readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { parseDependencyTree } from "dpdm";
import { sourceFiles } from "./source-files";

/** Every file to the files it imports (absolute paths; modules outside the workspace left out). */
export type ImportGraph = Map<string, string[]>;

/**
 * Core's folders (and root files) from the bottom up: a file may import from its own
 * folder and from folders below it, never from one above. `packages/core/ARCHITECTURE.md`
 * says what each layer holds.
 */
export const CORE_LAYERS: readonly (readonly [layer: string, folders: readonly string[]])[] = [
  [
    "contracts",
    [
      "errors",
      "ids",
      "load-once",
      "lazy-port",
      "build-once",
      "sandbox",
      "plan",
      "json-schema",
      "webhooks",
      "model-values",
      "record-fields",
      "model",
    ],
  ],
  ["ports", ["ports"]],
  ["store", ["store"]],
  ["capabilities", ["llm", "net", "knowledge", "files", "tools"]],
  ["vm", ["vm"]],
  ["planning", ["planning"]],
  ["services", ["service"]],
  // One wiring of the services over the ports (the functions' systems and the test systems).
  ["wiring", ["wiring"]],
  // The entry point, then the test doubles (`@stackvm/core/testing`): the entry never reaches them.
  ["surface", ["index", "api-records", "testing"]],
];

const FOLDER_ORDER = CORE_LAYERS.flatMap(([, folders]) => folders);

/** The folder of a path inside core's `src` (a root file's name without `.ts`), with its rank; null when no layer has it. */
export function coreLayerOf(pathInCore: string): { folder: string; rank: number } | null {
  const first = pathInCore.split(/[\\/]/)[0] ?? "";
  const folder =
    pathInCore.includes("/") || pathInCore.includes(sep)
      ? first
      : first.replace(/(\.test)?\.tsx?$/, "");
  const rank = FOLDER_ORDER.indexOf(folder);
  return rank === -1 ? null : { folder, rank };
}

/** Whether dpdm's id of a module is one of Node's own (`node:fs/promises`, which it names as a path below the folder it was imported from). */
const isNodeModule = (id: string) => isBuiltin(id.slice(Math.max(0, id.lastIndexOf("node:"))));

/**
 * Parses every `.ts`/`.tsx` file under `dirs` and what they import. `values`:
 * only what runs, the imports of values (dpdm compiles each file first, which
 * drops the imports of types as TypeScript does).
 */
export async function importGraph(
  dirs: readonly string[],
  options: { values?: boolean } = {},
): Promise<ImportGraph> {
  const context = resolve("/");
  const files = dirs.flatMap(sourceFiles);
  const tree = await parseDependencyTree(files, {
    context,
    transform: options.values === true,
    skipDynamicImports: false,
  });
  const graph: ImportGraph = new Map();
  for (const [file, dependencies] of Object.entries(tree)) {
    // Node's own modules (`node:crypto`, which dpdm names as a path) are no files of ours.
    if (isNodeModule(file)) continue;
    const targets = (dependencies ?? [])
      .map((dependency) => dependency.id)
      .filter(
        (id): id is string =>
          id !== null && !isNodeModule(id) && !id.includes(`${sep}node_modules${sep}`),
      )
      .map((id) => resolve(context, id));
    graph.set(resolve(context, file), [...new Set(targets)]);
  }
  return graph;
}

const packageRoots = new Map<string, string>();

/** The folder of the nearest `package.json` above a file. */
function packageOf(file: string): string {
  const dir = dirname(file);
  const known = packageRoots.get(dir);
  if (known !== undefined) return known;
  const root = existsSync(join(dir, "package.json")) || dirname(dir) === dir ? dir : packageOf(dir);
  packageRoots.set(dir, root);
  return root;
}

/**
 * The groups of files, each inside one package, whose imports lead from any of them
 * back to itself (strongly connected components of more than one file, or a file
 * that imports itself), as paths relative to `base`, sorted.
 */
export function importCycles(graph: ImportGraph, base: string): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const within = (file: string) =>
    (graph.get(file) ?? []).filter((to) => graph.has(to) && packageOf(to) === packageOf(file));
  // Tarjan's algorithm, iterative: a deep chain of imports must not overflow the stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { file: string; next: number }[] = [{ file: start, next: 0 }];
    index.set(start, index.size);
    low.set(start, index.get(start)!);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = within(frame.file);
      if (frame.next < edges.length) {
        const to = edges[frame.next++]!;
        if (!index.has(to)) {
          index.set(to, index.size);
          low.set(to, index.get(to)!);
          stack.push(to);
          onStack.add(to);
          work.push({ file: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== frame.file);
      if (group.length > 1 || edges.includes(frame.file)) {
        groups.push(group.map((file) => relative(base, file)).sort());
      }
    }
  }
  return groups.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Imports between two files of core (under `coreSrc`) that point from a lower layer to a higher one. */
export function upwardImports(graph: ImportGraph, coreSrc: string): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    // A test sits beside the code it checks and may build the whole system.
    if (!file.startsWith(coreSrc + sep) || /\.test\.tsx?$/.test(file)) continue;
    const from = coreLayerOf(relative(coreSrc, file));
    for (const target of targets) {
      if (!target.startsWith(coreSrc + sep)) continue;
      const to = coreLayerOf(relative(coreSrc, target));
      if (from === null || to === null || to.rank <= from.rank) continue;
      found.push(
        `${relative(coreSrc, file)} imports ${relative(coreSrc, target)} (layer ${from.folder} below ${to.folder})`,
      );
    }
  }
  return found.sort();
}

/** A source file's text without its comments (a name in a comment is not code). */
export function codeOf(file: string): string {
  return readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "");
}

/**
 * Every file of the graph that `from` reaches through it, not `from` itself
 * unless a cycle leads back (absolute paths).
 */
export function reachedFrom(graph: ImportGraph, from: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    for (const next of graph.get(file) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      visit(next);
    }
  };
  visit(from);
  return [...seen];
}

/**
 * The parallel group's files in core's `vm/` (packages/core/src/vm/ARCHITECTURE.md):
 * the rooms the step's main path enters only through `runGroup`. Read by the
 * architecture test and by `npm run walk` (scripts/step-walk.ts), on absolute
 * paths or paths inside core's `src`.
 */
export const isGroupFile = (path: string): boolean =>
  /(^|[\\/])vm[\\/](group|group-held|group-mark|join|member)\.ts$/.test(path);
