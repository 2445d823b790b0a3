/**
 * Retention under load (`npm run bench:retention`, issue 44): a table with
 * 10,000 expired finished tasks (copies of one finished task with its expiry
 * marker, `fill-table.ts`) is emptied by the retention sweep run back to back,
 * as the sweep's schedule would, while 100-step plans run beside it. Prints the
 * median step overhead before, during and after the deletions, their ratios to
 * before, and how fast the table emptied; writes `.stackvm/bench-retention.json`.
 * Tasks: `RETENTION_TASKS` (default 10000).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { EXPIRY_INDEX_PK } from "@stackvm/core";
import { startTestStack } from "../support/stack";
import { fillFinishedTasks } from "./fill-table";
import { CommitWatcher, chainPlan, type Hookable, median } from "./workload";

const TASKS = Number(process.env.RETENTION_TASKS ?? 10_000);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const print = (label: string, value: unknown) =>
  process.stdout.write(`${label.padEnd(60)} ${value}\n`);

async function main() {
  let offsetMs = 0;
  const t = await startTestStack({
    concurrency: 8,
    clock: { now: () => Date.now() + offsetMs },
    // The bench runs the retention sweep itself; the stack's timer would race it.
    sweepIntervalMs: 3_600_000,
  });
  const watcher = new CommitWatcher(t.stack.system.step as unknown as Hookable);
  const start = async (body: Record<string, unknown>) => {
    const created = await t.api("POST", "/v1/tasks", body);
    if (created.status !== 202) throw new Error(JSON.stringify(created.body));
    return created.body.task_id as string;
  };
  const overhead = async () => {
    const taskId = await start({ plan: chainPlan(100), budget: { max_steps: 500 }, keep: true });
    await watcher.ended(taskId);
    return median(watcher.gaps(taskId, 1, 100));
  };
  const due = async () =>
    (await t.stack.system.ports.items.query({ pk: EXPIRY_INDEX_PK, index: "gsi1", limit: 1 })).items
      .length;
  try {
    await t.stack.system.quotas.setOverrides("local", { retention_days: 1 });
    // The template: a finished 20-step task with its expiry marker (written after its end).
    const template = await start({ plan: chainPlan(20) });
    await watcher.ended(template);
    for (let i = 0; i < 200 && (await due()) === 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    const t0 = performance.now();
    const written = await fillFinishedTasks(t, template, TASKS);
    const fillMs = performance.now() - t0;

    // Before: the table full, nothing due yet.
    await overhead(); // warm-up
    const before = median([await overhead(), await overhead(), await overhead()]);

    // During: every marker due; the sweep runs back to back until none is left.
    offsetMs = 2 * 86_400_000;
    let deleted = 0;
    let sweeping = true;
    const sweepStart = performance.now();
    const sweeper = (async () => {
      for (;;) {
        const done = await t.stack.system.retention.sweep();
        deleted += done.deleted;
        if (done.deleted + done.dropped + done.postponed === 0) break;
      }
      sweeping = false;
    })();
    const during: number[] = [];
    const deletedWhileMeasured: number[] = [];
    while (sweeping) {
      const at = deleted;
      const ms = await overhead();
      if (!sweeping && deleted === at) break;
      during.push(ms);
      deletedWhileMeasured.push(deleted - at);
    }
    await sweeper;
    const sweepMs = performance.now() - sweepStart;

    const after = median([await overhead(), await overhead(), await overhead()]);
    const left = await due();
    const result = {
      tasks: TASKS,
      items_written: written,
      fill_ms: round(fillMs, 0),
      deleted,
      markers_left: left,
      sweep_s: round(sweepMs / 1000, 1),
      tasks_deleted_per_s: round(deleted / (sweepMs / 1000), 1),
      step_overhead_ms: {
        before: round(before),
        during: round(median(during)),
        after: round(after),
        during_runs: during.map((x) => round(x)),
        deleted_during_each_run: deletedWhileMeasured,
      },
      ratio_during: round(median(during) / before),
      ratio_after: round(after / before),
      load: loadavg().map((l) => round(l, 1)),
    };
    print("expired tasks in the table", `${TASKS} (${written} items)`);
    print("deleted by the sweep", `${deleted}, markers left ${left}`);
    print("time to empty (s)", `${result.sweep_s} (${result.tasks_deleted_per_s} tasks/s)`);
    print("median step overhead before (ms)", result.step_overhead_ms.before);
    print(
      "median step overhead during (ms)",
      `${result.step_overhead_ms.during} (${during.length} runs of 100 steps)`,
    );
    print("median step overhead after (ms)", result.step_overhead_ms.after);
    print("during / before, after / before", `${result.ratio_during}, ${result.ratio_after}`);
    print("load average", result.load.join(" "));
    await mkdir(resolve(".stackvm"), { recursive: true });
    await writeFile(
      resolve(".stackvm/bench-retention.json"),
      `${JSON.stringify(result, null, 2)}\n`,
    );
  } finally {
    await t.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
