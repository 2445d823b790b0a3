/**
 * The shape of the code base, checked: core knows no vendor (the lint rule, and the
 * imports themselves), the packages depend on each other without cycles, no file
 * imports itself back through others, and core's layers import only downward
 * (`packages/core/ARCHITECTURE.md` draws them).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { exportedNames, namesImportedFrom } from "./support/core-exports";
import {
  codeOf,
  coreLayerOf,
  importCycles,
  importGraph,
  isGroupFile,
  reachedFrom,
  upwardImports,
} from "./support/import-graph";
import {
  declaredRouteLines,
  handKeptMethodLists,
  handKeptRouteLines,
  routeLineForms,
  serverSources,
} from "./support/lazy-declarations";
import { sourceFiles } from "./support/source-files";

const root = resolve(import.meta.dirname, "..");
const packagesDir = join(root, "packages");

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  // `from` and `import` as words: a string such as "forked_from" is not an import.
  return [...text.matchAll(/(?:^|[\s}])(?:from|import)\s*\(?\s*"([^"]+)"/gm)].map((m) => m[1]!);
}

/**
 * What core's runtime code may import besides itself and Node's built-ins: libraries
 * that compute, not vendors' clients (`unpdf` reads PDFs for knowledge ingest, loaded
 * on first use; `htmlparser2` tokenizes uploaded HTML in linear time).
 */
const CORE_ALLOWED = new Set([
  "zod",
  "ipaddr.js",
  "cron-parser",
  "unpdf",
  "htmlparser2",
  // Spreadsheets for knowledge ingest, loaded with the first .xlsx (knowledge/xlsx-text.ts).
  "exceljs",
  // Tenants' JSON Schemas, compiled by Ajv, their patterns run by RE2 (linear time).
  "ajv/dist/2020.js",
  "re2js",
  // web_fetch's page reader, loaded with its first HTML page (tools/web/page-markdown.ts).
  "linkedom",
  "@mozilla/readability",
  "turndown",
]);

describe("the architecture", () => {
  it("keeps vendors out of core's runtime code", () => {
    const offending = sourceFiles(join(packagesDir, "core/src"))
      // Tests and their helpers may import test tools; they never ship in a bundle.
      .filter((f) => !/\.test\.ts$|\/testing\//.test(f))
      .flatMap((file) =>
        importsOf(file)
          .filter((m) => !m.startsWith(".") && !m.startsWith("node:") && !CORE_ALLOWED.has(m))
          .map((m) => `${file.slice(root.length + 1)} imports ${m}`),
      );
    expect(offending).toEqual([]);
  });

  it("fails the lint when core imports the AWS SDK", () => {
    const probe = join(packagesDir, "core/src/architecture-probe.ts");
    writeFileSync(
      probe,
      'import { DynamoDBClient } from "@aws-sdk/client-dynamodb";\nexport const probe = DynamoDBClient;\n',
    );
    try {
      const biome = join(root, "node_modules/.bin/biome");
      const run = spawnSync(biome, ["lint", probe], { encoding: "utf8" });
      expect(run.status).not.toBe(0);
      expect(`${run.stdout}${run.stderr}`).toMatch(/noRestrictedImports|core knows no vendor/);
    } finally {
      rmSync(probe, { force: true });
    }
  });

  it("has no cycles between the workspace packages", () => {
    const names = readdirSync(packagesDir);
    const edges = new Map<string, Set<string>>();
    for (const name of names) {
      const deps = new Set<string>();
      for (const file of sourceFiles(join(packagesDir, name, "src"))) {
        for (const m of importsOf(file)) {
          const match = /^@stackvm\/([a-z-]+)/.exec(m);
          if (match && match[1] !== name) deps.add(match[1]!);
        }
      }
      edges.set(name, deps);
    }
    const cycles: string[] = [];
    const visit = (node: string, path: string[]) => {
      if (path.includes(node)) {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
        return;
      }
      for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
    };
    for (const name of names) visit(name, []);
    expect(cycles).toEqual([]);
    expect([...(edges.get("core") ?? [])]).toEqual([]);
  });

  it("has no import cycle between the files of any package", async () => {
    const graph = await importGraph(
      readdirSync(packagesDir).map((name) => join(packagesDir, name, "src")),
    );
    const cycles = importCycles(graph, packagesDir).map((cycle) => cycle.join(" -> "));
    expect(cycles).toEqual([]);
  });

  it("keeps every import in core pointing down its layers", async () => {
    const graph = await importGraph([join(packagesDir, "core/src")]);
    const core = join(packagesDir, "core/src");
    // Every file of core has a layer: a new folder must be placed before it is used.
    const unplaced = [...graph.keys()]
      .filter((file) => file.startsWith(core) && coreLayerOf(file.slice(core.length + 1)) === null)
      .map((file) => file.slice(core.length + 1));
    expect(unplaced).toEqual([]);
    expect(upwardImports(graph, core)).toEqual([]);
  });

  it("sees a cycle and an upward import when there is one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "import-graph-"));
    try {
      const src = join(dir, "src");
      writeFileSync(join(dir, "package.json"), "{}");
      for (const folder of ["vm", "store"]) spawnSync("mkdir", ["-p", join(src, folder)]);
      writeFileSync(
        join(src, "store/records.ts"),
        'import type { Step } from "../vm/step";\nexport type Rec = Step;\n',
      );
      writeFileSync(
        join(src, "vm/step.ts"),
        'import type { Rec } from "../store/records";\nexport type Step = { rec?: Rec };\n',
      );
      const graph = await importGraph([src]);
      expect(importCycles(graph, dir)).toEqual([["src/store/records.ts", "src/vm/step.ts"]]);
      expect(upwardImports(graph, src)).toEqual([
        "store/records.ts imports vm/step.ts (layer store below vm)",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps no second list of what loads on first use: routes and port methods are declared once", () => {
    // A route's method and path are written in its file's declaration (routes/*.paths.ts)
    // only; a lazy port's methods come from its type (core's lazyPort).
    const sources = serverSources();
    expect(handKeptRouteLines(sources, declaredRouteLines())).toEqual([]);
    expect(handKeptMethodLists(sources)).toEqual([]);
  });

  it("sees a route written again and a port's methods listed by hand", () => {
    const declared = routeLineForms(["POST /v1/notes", "GET /v1/notes/:note_id"]);
    const sources = [
      {
        file: "packages/api/src/routes/notes.paths.ts",
        text: 'x = { addNote: "POST /v1/notes" };',
      },
      {
        file: "packages/api/src/route-list.ts",
        text: 'const routes = ["GET /v1/notes/:note_id"];',
      },
      {
        file: "packages/api/src/ids.ts",
        text: 'const ids = { "get /v1/notes/{note_id}": "getNote" };',
      },
      { file: "packages/api/src/docs.ts", text: ' * `"POST /v1/notes"` in a comment is no list' },
      {
        file: "packages/aws/src/lazy-notes.ts",
        text: 'return onFirstUse<Notes>(["add", "get"], async () => new S3Notes());\nget: async (id) => (await load()).get(id),',
      },
    ];
    expect(handKeptRouteLines(sources, declared)).toEqual([
      'packages/api/src/route-list.ts writes "GET /v1/notes/:note_id", which its route file declares',
      'packages/api/src/ids.ts writes "get /v1/notes/{note_id}", which its route file declares',
    ]);
    expect(handKeptMethodLists(sources)).toEqual([
      'packages/aws/src/lazy-notes.ts lists method names: onFirstUse<Notes>(["add", "get"], async',
      "packages/aws/src/lazy-notes.ts forwards get by hand",
    ]);
  });

  it("exports from core's entry point only what other packages import", () => {
    const core = join(packagesDir, "core");
    const used = namesImportedFrom(
      "@stackvm/core",
      ["packages", "test", "scripts", "infra"].map((dir) => join(root, dir)),
      core,
    );
    const unused = exportedNames(join(core, "src/index.ts")).filter((name) => !used.has(name));
    expect(unused).toEqual([]);
  });

  it("reaches the raw items of a store only inside core's store/", () => {
    // A store is held as `store` (or `stores`); its `items` is the raw port the
    // store's methods guard (keys, conditions), so a caller outside `store/`
    // asks the store for what it needs instead. The wiring builds stores from
    // the port itself (`ports.items`), not from a store.
    const reached = ["packages", "test"]
      .flatMap((dir) => sourceFiles(join(root, dir)))
      .filter(
        (file) => !file.includes("/packages/core/src/store/") && file !== import.meta.filename,
      )
      .filter((file) => /\bstores?\.items\b/.test(readFileSync(file, "utf8")))
      .map((file) => file.slice(root.length + 1));
    expect(reached).toEqual([]);
  });

  it("sees a store's raw items reached from outside store/", () => {
    expect(/\bstores?\.items\b/.test("await this.deps.store.items.delete(key)")).toBe(true);
    expect(/\bstores?\.items\b/.test("const page = await store.listTasks(); page.items")).toBe(
      false,
    );
  });

  it("runs a step top-down: runStep calls itself nowhere, and enters the group's files once", async () => {
    // packages/core/src/vm/ARCHITECTURE.md, "How a step reads". The group's
    // rooms are its files; the step's main path may enter them only through
    // runGroup (and joinedAt, for a message for another head), and nothing the
    // commit tail runs leads back into them.
    const vm = join(packagesDir, "core/src/vm");
    const step = join(vm, "step.ts");
    const runs = await importGraph([join(packagesDir, "core/src")], { values: true });
    expect(codeOf(step).match(/\brunStep\s*\(/g)).toHaveLength(1);
    const belowStep = reachedFrom(runs, step).filter((file) => /\brunStep\b/.test(codeOf(file)));
    expect(belowStep.map((file) => file.slice(root.length + 1))).toEqual([]);

    const enteredFromStep = [...codeOf(step).matchAll(/import \{([^}]*)\} from "\.\/([\w-]+)"/g)]
      .filter((m) => isGroupFile(`vm/${m[2]}.ts`))
      .flatMap((m) => m[1]!.split(",").map((name) => name.trim()))
      .sort();
    expect(enteredFromStep).toEqual(["joinedAt", "runGroup"]);
    for (const tail of ["commit-tail.ts", "commit.ts"]) {
      const back = reachedFrom(runs, join(vm, tail)).filter(isGroupFile);
      expect(
        back.map((file) => file.slice(root.length + 1)),
        tail,
      ).toEqual([]);
    }
  });

  it("keeps every source file of core at most 400 lines", () => {
    const core = join(packagesDir, "core/src");
    const long = sourceFiles(core)
      .filter((file) => !/\.test\.ts$/.test(file))
      .map((file) => ({
        file: file.slice(core.length + 1),
        lines: readFileSync(file, "utf8").split("\n").length - 1,
      }))
      .filter(({ lines }) => lines > 400);
    expect(long).toEqual([]);
  });
});
