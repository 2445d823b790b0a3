/**
 * The order Vitest starts test files in: the longest first, so that no long file
 * starts last and runs alone at the end. Vitest's own order does this from the
 * durations of the last run, and without them (a fresh clone, CI) starts the
 * largest files first: a short file that starts a stack, a browser or a child
 * process can take ten times longer than a long one of pure functions. Here a file
 * with no recorded duration is estimated from what it starts.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** What makes a file slow: it starts stacks, servers, a browser or processes. */
const STARTS_SOMETHING =
  /startTestStack|useTestStack|startLocalStack|startLlamaServer|chromium|SandboxRunner|LocalSandbox|PythonEngine|startDynamoDbLocal|runCli|chaos-run|spawn\(/;

/** Rough durations (ms) for a file never run here, in the unit of recorded ones. */
const UNKNOWN_HEAVY_MS = 20_000;
const UNKNOWN_LIGHT_MS = 1_000;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const root = this.ctx.config.root;
    const rank = new Map<TestSpecification, { failed: boolean; ms: number; size: number }>();
    for (const file of files) {
      const key = `${file.project.name}:${relative(root, file.moduleId)}`;
      const known = cache.getFileTestResults(key);
      const size = cache.getFileStats(key)?.size ?? 0;
      if (known) {
        rank.set(file, { failed: known.failed, ms: known.duration, size });
        continue;
      }
      let heavy = false;
      try {
        heavy = STARTS_SOMETHING.test(readFileSync(file.moduleId, "utf8"));
      } catch {
        // Unreadable here: Vitest will say so when it runs it.
      }
      rank.set(file, { failed: false, ms: heavy ? UNKNOWN_HEAVY_MS : UNKNOWN_LIGHT_MS, size });
    }
    return [...files].sort((a, b) => {
      const ra = rank.get(a)!;
      const rb = rank.get(b)!;
      // As Vitest does: what failed last time first, for a quick answer.
      if (ra.failed !== rb.failed) return ra.failed ? -1 : 1;
      return rb.ms - ra.ms || rb.size - ra.size;
    });
  }
}
