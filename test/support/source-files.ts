/**
 * The TypeScript source files under a folder, as the checks of the code's shape
 * read them: `.ts` and `.tsx`, not declarations, not `node_modules` or hidden folders.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every source file under `dir`, as absolute paths when `dir` is one. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === "node_modules" || entry.name.startsWith(".") ? [] : sourceFiles(path);
    }
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}
