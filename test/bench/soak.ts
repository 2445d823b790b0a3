/**
 * `npm run bench:soak`: the local stack left running under a steady load, as a
 * user would leave `npm start` for weeks (issue 13, finding 10). Starts it as a
 * child process on a fresh data folder, runs SOAK_TASKS tasks (default 10,000)
 * of SOAK_STEPS steps, SOAK_WAVE at a time, and prints the stack's RSS and the
 * data folder's size after every SOAK_EVERY tasks: both should level off, not
 * grow with the tasks run.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client,
  exited,
  folderMiB,
  freePort,
  killGroup,
  rssMiB,
  startStack,
} from "../chaos/chaos-run";

const size = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const total = size("SOAK_TASKS", 10_000);
const steps = size("SOAK_STEPS", 3);
const wave = size("SOAK_WAVE", 50);
const every = size("SOAK_EVERY", 1_000);

const dataDir = await mkdtemp(join(tmpdir(), "stackvm-soak-"));
const port = await freePort();
const stack = await startStack(dataDir, port);
const client = new Client(
  `http://127.0.0.1:${port}`,
  readFileSync(join(dataDir, "api-key"), "utf8").trim(),
);
const plan = [
  { seq_no: 0, type: "assign", parameters: { x: 1 } },
  ...Array.from({ length: steps - 2 }, (_, i) => ({
    seq_no: i + 1,
    type: "assign",
    parameters: { x: "${x} + 1" },
  })),
  { seq_no: steps - 1, type: "assign", parameters: { final_answer: "${x}" } },
];
const started = Date.now();
process.stdout.write(
  `tasks   RSS MiB   data MiB   tasks/s\n${"0".padStart(5)}   ${String(rssMiB(stack.pid!)).padStart(7)}   ${String(folderMiB(dataDir)).padStart(8)}\n`,
);
try {
  for (let done = 0; done < total; ) {
    const ids = await Promise.all(
      Array.from({ length: Math.min(wave, total - done) }, async () => {
        // The same Idempotency-Key on a retry: a slow answer is not a second task.
        const key = `soak-${randomUUID()}`;
        for (let attempt = 0; attempt < 5; attempt++) {
          const res = await client.request("POST", "/v1/tasks", { plan }, key);
          // 200 is the replay of a first try whose answer was lost: the same task.
          if (res?.status === 202 || res?.status === 200) {
            return (res.body as { task_id: string }).task_id;
          }
          if (res) throw new Error(`POST /v1/tasks answered ${res.status}`);
        }
        throw new Error("POST /v1/tasks got no answer in five tries");
      }),
    );
    for (const id of ids) {
      for (;;) {
        const res = await client.request("GET", `/v1/tasks/${id}`);
        const status = (res?.body as { status?: string } | undefined)?.status;
        if (status === "completed") break;
        if (status === "failed") throw new Error(`task ${id} failed`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const before = done;
    done += ids.length;
    if (Math.floor(done / every) > Math.floor(before / every) || done === total) {
      const rate = done / ((Date.now() - started) / 1000);
      process.stdout.write(
        `${String(done).padStart(5)}   ${String(rssMiB(stack.pid!)).padStart(7)}   ${String(folderMiB(dataDir)).padStart(8)}   ${rate.toFixed(1).padStart(7)}\n`,
      );
    }
  }
} finally {
  killGroup(stack);
  await exited(stack);
  await rm(dataDir, { recursive: true, force: true });
}
