/**
 * Completes the sandbox function's bundle. The runner starts QuickJS in a
 * worker thread and Pyodide in a child process, each from a script next to its
 * own module (`new URL("./quickjs-worker.ts", import.meta.url)`). SST bundles
 * only the handler, so in the deployed bundle those URLs point next to the
 * handler's file, where nothing is. This bundles the two scripts there, under
 * the names the runner asks for: Node 24 runs a `.ts` file by stripping its
 * types, and plain JavaScript passes through unchanged.
 *
 * Used by `infra/sandbox.ts` as SST's `hook.postbuild`; no SST global here, so
 * that a test can package the sandbox exactly as a deploy does.
 */
import { readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { build } from "esbuild";

/** The scripts the runner starts, relative to the project root. */
export const sandboxScripts = [
  "packages/sandbox/src/javascript/quickjs-worker.ts",
  "packages/sandbox/src/python/pyodide-child.ts",
];

/** Packages the sandbox function installs instead of bundling (they load wasm and files from their folders). */
export const sandboxInstalls = ["pyodide", "quickjs-emscripten"];

/** What SST puts on top of an ESM bundle, so that bundled CommonJS can still `require`. */
export const esmBanner = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url";`,
  `const __filename = topLevelFileUrlToPath(import.meta.url);`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url));`,
].join("\n");

/** How a sandbox script or entry is bundled: one minified ESM file for Node 24, as SST bundles a handler. */
export const nodeBundle = {
  bundle: true,
  minify: true,
  platform: "node",
  format: "esm",
  target: "node24",
  banner: { js: esmBanner },
} as const;

/** Finds the folder of the handler's bundled file (`sandbox.mjs`) under `dir`. */
async function handlerFolder(dir: string, handlerName: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true });
  const file = entries.find((entry) =>
    [".mjs", ".js", ".cjs"].some((ext) => basename(entry) === `${handlerName}${ext}`),
  );
  if (file === undefined) {
    throw new Error(
      `the sandbox bundle in ${dir} has no ${handlerName}.mjs: SST's output layout changed, so the runner's scripts cannot be put next to it (infra/sandbox-scripts.ts)`,
    );
  }
  return join(dir, dirname(file));
}

/**
 * Bundles the runner's scripts next to the handler's file in `dir` (SST's
 * build output). Returns the paths written.
 */
export async function bundleSandboxScripts(
  dir: string,
  root: string,
  handlerName = "sandbox",
): Promise<string[]> {
  const folder = await handlerFolder(dir, handlerName);
  const written: string[] = [];
  for (const script of sandboxScripts) {
    const outfile = join(folder, basename(script));
    await build({
      entryPoints: [join(root, script)],
      outfile,
      ...nodeBundle,
      external: sandboxInstalls,
      logLevel: "warning",
    });
    written.push(outfile);
  }
  return written;
}
