/**
 * `npm run build:console`: builds the client and writes the committed bundle
 * module, formatted as Biome wants it so that `biome ci` stays clean.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildConsoleBundle, bundleModule } from "./build";

const target = join(import.meta.dirname, "generated", "console-bundle.ts");
const bundle = await buildConsoleBundle();
await writeFile(target, bundleModule(bundle));
execFileSync("npx", ["biome", "format", "--write", target], { stdio: "inherit" });
process.stdout.write(
  `console bundle: ${(bundle.js.length / 1024).toFixed(1)} KiB JS, ${(bundle.css.length / 1024).toFixed(1)} KiB CSS -> ${target}\n`,
);
