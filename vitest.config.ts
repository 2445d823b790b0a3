import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import { ISOLATED } from "./test/isolated";
import LongestFirst from "./test/sequencer";

const INCLUDE = ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: one file at a time on a
    // 2-core machine. Most of the suite waits (on stacks it starts, a browser,
    // sleeps of the scripted servers) rather than computes: the cores sat 60% idle.
    maxWorkers: availableParallelism() + 1,
    // The longest files first, estimated from what they start when no earlier run recorded them.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: { name: "isolated", include: ISOLATED, isolate: true },
      },
      {
        extends: true,
        test: {
          name: "shared",
          include: INCLUDE,
          exclude: [...configDefaults.exclude, ...ISOLATED],
          // A process runs file after file: the modules every file imports (the
          // AWS SDK, LanceDB, the stack's own) are evaluated once per process, not
          // once per file. Each file starts and stops its own stacks and servers.
          isolate: false,
        },
      },
    ],
  },
});
