import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import LongestFirst from "./sequencer";

const ROOT = resolve(import.meta.dirname, "..");

/** The sequencer over these files, with `recorded` as the last run's durations and outcomes. */
function order(
  paths: string[],
  recorded: Record<string, { duration: number; failed?: boolean }> = {},
): Promise<string[]> {
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileTestResults: (key: string) => {
        const known = recorded[key.slice(key.indexOf(":") + 1)];
        return known ? { failed: known.failed ?? false, duration: known.duration } : undefined;
      },
      getFileStats: () => ({ size: 1 }),
    },
  } as unknown as Vitest;
  const files = paths.map(
    (path) => ({ project: { name: "shared" }, moduleId: resolve(ROOT, path) }) as TestSpecification,
  );
  return new LongestFirst(ctx)
    .sort(files)
    .then((sorted) => sorted.map((file) => file.moduleId.slice(ROOT.length + 1)));
}

const PURE = "packages/core/src/plan/arithmetic.test.ts";
const STACK = "test/system/branches.test.ts";
const PROCESS = "test/system/service.test.ts";

describe("the order test files start in", () => {
  it("starts files that start stacks or processes before pure ones when nothing is recorded", async () => {
    const sorted = await order([PURE, STACK, PROCESS]);
    expect(sorted.indexOf(PURE)).toBe(2);
  });

  it("follows the recorded durations, the failed first", async () => {
    expect(
      await order([STACK, PURE, PROCESS], {
        [STACK]: { duration: 5_000 },
        [PURE]: { duration: 100, failed: true },
        [PROCESS]: { duration: 30_000 },
      }),
    ).toEqual([PURE, PROCESS, STACK]);
  });
});
