/**
 * Test files share worker processes (vitest.config.ts), so a file that mocks a
 * module, fakes timers, stubs a global or the environment, or sets
 * `process.env` by hand would change what every later file in its process
 * sees. Such a file must be in `ISOLATED` (test/isolated.ts), which runs it in
 * a process of its own.
 */
import { globSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ISOLATED } from "./isolated";

const root = join(import.meta.dirname, "..");
const CHANGES_THE_PROCESS =
  /\bvi\.(mock|doMock|useFakeTimers|stubEnv|stubGlobal)\(|process\.env(\.[A-Za-z_]\w*|\[[^\]]+\])\s*=[^=]|delete process\.env/;

describe("test files that change their process", () => {
  it("are each listed to run in a process of their own", () => {
    const files = globSync(["packages/*/src/**/*.test.ts", "test/**/*.test.ts"], {
      cwd: root,
      exclude: (path) => path.includes("node_modules"),
    }).filter((file) => file !== "test/isolated.test.ts");
    expect(files.length).toBeGreaterThan(100);
    const changing = files.filter((file) =>
      CHANGES_THE_PROCESS.test(readFileSync(join(root, file), "utf8")),
    );
    expect(changing.filter((file) => !ISOLATED.includes(file)).sort()).toEqual([]);
    // Every file listed exists.
    for (const file of ISOLATED) expect(files).toContain(file);
  });
});
