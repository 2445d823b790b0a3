/**
 * What the code declares it loads on first use, read from the declarations
 * themselves, so that the checks of the cold start (test/infra/cold-start.test.ts)
 * and of hand-kept lists (test/architecture.test.ts) need no list of their own:
 * the modules each `lazyPort(...)` call imports, the route files of the API's
 * groups (`route-groups.ts`), and the route lines each `routes/*.paths.ts` declares.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROUTE_GROUPS } from "../../packages/api/src/route-groups";
import { sourceFiles } from "./source-files";

const root = resolve(import.meta.dirname, "../..");
const packagesDir = join(root, "packages");

/** The project's source files, tests left out, as absolute paths. */
export const runtimeSources = (): string[] =>
  sourceFiles(packagesDir).filter(
    (file) => !/\.test\.tsx?$/.test(file) && !file.includes("/testing/"),
  );

/** The text of a call from its opening parenthesis at `start` to the one that closes it. */
function callText(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return text.slice(start, i + 1);
  }
  return text.slice(start);
}

/** A relative import from `file` as the source file it names. */
function resolveImport(file: string, specifier: string): string {
  const base = resolve(dirname(file), specifier);
  const found = [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((p) => existsSync(p));
  if (!found) throw new Error(`${relative(root, file)}: import("${specifier}") names no file`);
  return found;
}

/** One `lazyPort(...)` call: the file that makes it, and the call's text. */
export interface LazyPortCall {
  file: string;
  text: string;
}

/** Every `lazyPort(...)` call of the project's runtime code. */
export function lazyPortCalls(): LazyPortCall[] {
  return runtimeSources().flatMap((file) => {
    if (file.endsWith("/lazy-port.ts")) return [];
    const text = readFileSync(file, "utf8");
    return [...text.matchAll(/\blazyPort(?:<[^(]*>)?\(/g)].map((m) => ({
      file: relative(root, file),
      text: callText(text, (m.index ?? 0) + m[0].length - 1),
    }));
  });
}

/** The modules (repository-relative) that the `lazyPort` calls import on first use. */
export function lazyPortModules(): string[] {
  const modules = lazyPortCalls().flatMap(({ file, text }) =>
    [...text.matchAll(/\bimport\("(\.[^"]+)"\)/g)].map((m) =>
      relative(root, resolveImport(join(root, file), m[1] ?? "")),
    ),
  );
  return [...new Set(modules)].sort();
}

/** The route file of each of the API's groups (repository-relative), loaded on its first request. */
export function lazyRouteModules(): string[] {
  return ROUTE_GROUPS.map((group) => {
    const file = `packages/api/src/routes/${group.name}.ts`;
    if (!existsSync(join(root, file))) throw new Error(`route group ${group.name} has no ${file}`);
    return file;
  });
}

/** Every route line the groups declare, in both forms: `METHOD /a/{b}` and `METHOD /a/:b`. */
export function declaredRouteLines(): Set<string> {
  const lines = ROUTE_GROUPS.flatMap((group) =>
    group.routes.flatMap((route) => [route, route.replace(/:(\w+)/g, "{$1}")]),
  );
  return new Set(lines);
}
