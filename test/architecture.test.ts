/**
 * The shape of the code base, checked: core knows no vendor (the lint rule, and the
 * imports themselves), and the packages depend on each other without cycles.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const packagesDir = join(root, "packages");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

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
  // Tenants' JSON Schemas, compiled by Ajv, their patterns run by RE2 (linear time).
  "ajv/dist/2020.js",
  "re2js",
]);

describe("the architecture", () => {
  it("keeps vendors out of core's runtime code", () => {
    const offending = sourceFiles(join(packagesDir, "core/src"))
      // Tests and their helpers may import test tools; they never ship in a bundle.
      .filter(
        (f) =>
          !/(\.test\.ts|test-support\.ts|-fixtures\.ts|test-context\.ts|-fakes\.ts)$|\/testing\//.test(
            f,
          ),
      )
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
});
