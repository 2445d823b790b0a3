/**
 * `npm run chaos`: 200 tasks of 30 steps on the local stack, which is killed
 * with SIGKILL (the whole process group) three times at random moments and
 * twice during bursts of POST /v1/tasks, and restarted on the same data each
 * time. Prints lost, duplicated and stuck tasks (all must be 0), each restart's
 * recovery time, the stack's RSS before and after, and the data folder's size.
 * Sizes: CHAOS_TASKS, CHAOS_STEPS, CHAOS_KILLS, CHAOS_BURST_KILLS.
 */
import { runChaos } from "./chaos-run";

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const report = await runChaos({
  tasks: size("CHAOS_TASKS", 200),
  steps: size("CHAOS_STEPS", 30),
  kills: size("CHAOS_KILLS", 3),
  burstKills: size("CHAOS_BURST_KILLS", 2),
  say: (line) => process.stdout.write(`  ${line}\n`),
});
const ok = report.lost.length + report.duplicated.length + report.stuck.length === 0;
process.stdout.write(
  [
    "",
    `tasks:        ${report.tasks} (${report.steps} steps each; ${report.cutStarts} burst starts cut by a kill, failed clearly)`,
    `completed:    ${report.completed}`,
    `lost:         ${report.lost.length}${report.lost.length ? `  ${report.lost.slice(0, 5).join(", ")}` : ""}`,
    `duplicated:   ${report.duplicated.length}${report.duplicated.length ? `  ${report.duplicated.slice(0, 5).join(", ")}` : ""}`,
    `stuck:        ${report.stuck.length}${report.stuck.length ? `  ${report.stuck.slice(0, 5).join(", ")}` : ""}`,
    ...report.restarts.map(
      (r, i) =>
        `restart ${i + 1}:    killed during ${r.during}; API back in ${(r.apiMs / 1000).toFixed(1)} s, tasks moving in ${(r.movingMs / 1000).toFixed(1)} s`,
    ),
    `RSS:          ${report.rssMiB.start} MiB at start, ${report.rssMiB.before} MiB before the first kill, ${report.rssMiB.after} MiB at the end (a process started at the last restart)`,
    `data folder:  ${report.dataMiB} MiB`,
    `elapsed:      ${(report.elapsedMs / 1000).toFixed(0)} s`,
    "",
  ].join("\n"),
);
process.exit(ok ? 0 : 1);
