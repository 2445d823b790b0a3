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

/**
 * Route lines (Hono's `METHOD /a/:b`) in each form a list would write them:
 * `METHOD /a/{b}`, `METHOD /a/:b`, and with the method in lower case (as the
 * OpenAPI registry and the document's keys spell it).
 */
export function routeLineForms(routes: readonly string[]): Set<string> {
  const lines = routes.flatMap((route) => {
    const forms = [route, route.replace(/:(\w+)/g, "{$1}")];
    return [...forms, ...forms.map((line) => line.replace(/^\w+/, (m) => m.toLowerCase()))];
  });
  return new Set(lines);
}

/** Every route line the groups declare, in each of its forms. */
export const declaredRouteLines = (): Set<string> =>
  routeLineForms(ROUTE_GROUPS.flatMap((group) => group.routes));

/** A source file's path (repository-relative) and text, as the checks below read it. */
export interface SourceText {
  file: string;
  text: string;
}

/** The runtime sources of the packages that serve the API (clients, the console and the CLI, call it). */
export function serverSources(): SourceText[] {
  return runtimeSources()
    .filter((file) => /\/packages\/(api|functions|local|core|aws)\/src\//.test(file))
    .map((file) => ({ file: relative(root, file), text: readFileSync(file, "utf8") }));
}

/** The text without its comments' lines, so that a path named in a JSDoc example is no list. */
const codeLines = (text: string): string[] =>
  text.split("\n").filter((line) => !/^\s*(\*|\/\/|\/\*\*)/.test(line));

/**
 * String literals that write a declared route again outside the file's own
 * declaration (`routes/*.paths.ts`): a route line (`"GET /v1/x/{id}"`, or with
 * `:id`), or a declared path alone. Each is a second list to keep by hand.
 */
export function handKeptRouteLines(
  sources: readonly SourceText[],
  declared: Set<string>,
): string[] {
  const paths = new Set([...declared].map((line) => line.split(" ")[1] ?? ""));
  return sources.flatMap(({ file, text }) => {
    if (/routes\/[\w-]+\.paths\.ts$/.test(file)) return [];
    return codeLines(text).flatMap((line) =>
      [...line.matchAll(/"([^"\n]+)"/g)]
        .map((m) => m[1] ?? "")
        .filter((literal) => declared.has(literal) || paths.has(literal))
        .map((literal) => `${file} writes "${literal}", which its route file declares`),
    );
  });
}

/**
 * Lists of a port's method names kept by hand beside a loader: an array of
 * method names handed with an async loader (`wrap(["get", "put"], async () => ...)`),
 * anywhere, or, in a lazy adapter's file (`lazy-*.ts`), a method forwarded by
 * name to what a loader answers (`get: async (id) => (await load()).get(id)`).
 * `lazyPort` takes its methods from the port's type instead. (Fronts that are
 * more than a port loaded late, such as the LLM session's, whose record of calls
 * is its own, or the tracing front's, which flushes only what it loaded, forward
 * their few methods themselves.)
 */
export function handKeptMethodLists(sources: readonly SourceText[]): string[] {
  const nameList =
    /\w+(?:<[^>(]*>)?\(\s*\[\s*"[a-z]\w*"(?:\s*,\s*"[a-z]\w*")*\s*,?\s*\]\s*,\s*async\b/g;
  const forwarded = /\b(\w+): async \([^)]*\) =>\s*\(await \w+\(\)\)\.\1\(/g;
  return sources.flatMap(({ file, text }) => [
    ...[...text.matchAll(nameList)].map((m) => `${file} lists method names: ${m[0]}`),
    ...(/(^|\/)lazy-[\w-]+\.ts$/.test(file)
      ? [...text.matchAll(forwarded)].map((m) => `${file} forwards ${m[1]} by hand`)
      : []),
  ]);
}
