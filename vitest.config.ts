import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer";

const INCLUDE = ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"];

/**
 * Files that change what the next file in the same process would see: module
 * mocks, stubbed globals or environment, fake timers, `process.env` set by hand.
 * They run as Vitest runs every file by default, each in a fresh process.
 */
const ISOLATED = [
  "packages/core/src/webhooks/signature.test.ts",
  "packages/functions/src/tool-secrets.test.ts",
  "packages/local/src/local-scheduler.test.ts",
  "packages/local/src/sandbox-invoker.test.ts",
  "packages/sandbox/src/python/python.test.ts",
  "packages/web/src/client/task-feed.test.ts",
  "test/system/bedrock.test.ts",
];

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
