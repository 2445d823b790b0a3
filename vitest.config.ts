import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: one file at a time on a
    // 2-core machine. Most of the suite waits (on stacks it starts, a browser,
    // sleeps of the scripted servers) rather than computes: the cores sat 60% idle.
    maxWorkers: availableParallelism() + 1,
  },
});
