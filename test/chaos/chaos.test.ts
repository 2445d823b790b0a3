/**
 * The chaos run in small (issue 13): the stack killed once with SIGKILL, during
 * a burst of POST /v1/tasks while the tasks before it run, and restarted on the
 * same data; nothing lost, duplicated or stuck. `npm run chaos` is the full
 * size (three kills while tasks run, two during bursts), with the timings.
 */
import { describe, expect, it } from "vitest";
import { runChaos } from "./chaos-run";

describe("the local stack killed with SIGKILL", () => {
  it("loses, duplicates and leaves stuck no task", async () => {
    const report = await runChaos({
      tasks: 10,
      steps: 8,
      kills: 0,
      burstKills: 1,
      burstSize: 10,
      settleMs: 120_000,
    });
    expect({
      lost: report.lost,
      duplicated: report.duplicated,
      stuck: report.stuck,
    }).toEqual({ lost: [], duplicated: [], stuck: [] });
    expect(report.completed + report.cutStarts).toBe(report.tasks);
    expect(report.restarts.every((r) => Number.isFinite(r.movingMs))).toBe(true);
  }, 480_000);
});
