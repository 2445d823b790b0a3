/**
 * The build context of the data sandbox function's image
 * (`infra/sandbox-data/Dockerfile`): the runner, bundled into one ESM file that
 * the image's Node runs as its entry (`packages/functions/src/sandbox-data.ts`,
 * its own Lambda runtime). Nothing else of the repository goes into the image.
 *
 * No SST global here, so that a test bundles and runs exactly what a deploy
 * puts in the image (`test/infra/sandbox-data-image.test.ts`).
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";
import { nodeBundle } from "./sandbox-scripts";

/** The entry, relative to the project root. */
export const dataRuntimeEntry = "packages/functions/src/sandbox-data.ts";

/** The Dockerfile, relative to the project root. */
export const dataDockerfile = "infra/sandbox-data/Dockerfile";

/** Where the bundled entry lands inside the context; the Dockerfile copies `runtime/`. */
export const dataRuntimeFile = "runtime/sandbox-data.mjs";

/**
 * Writes the context into `dir` (emptied first): `runtime/sandbox-data.mjs`.
 * Returns the bundle's path.
 */
export async function buildDataImageContext(dir: string, root: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, "runtime"), { recursive: true });
  const outfile = join(dir, dataRuntimeFile);
  await build({
    entryPoints: [join(root, dataRuntimeEntry)],
    outfile,
    ...nodeBundle,
    // Pyodide and QuickJS are the other sandbox's engines: the data runner never
    // loads them, and the image has neither.
    external: ["pyodide", "quickjs-emscripten"],
    logLevel: "warning",
  });
  return outfile;
}
