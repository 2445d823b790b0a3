/**
 * The chaos run of issue 13: the local stack as a child process group on a data
 * folder of its own, tasks of many steps, SIGKILL of the whole group at random
 * moments (some during bursts of POST /v1/tasks) and a restart on the same data
 * each time; then every task is checked. `npm run chaos` runs the full size and
 * prints the numbers; `chaos.test.ts` runs a small one in `npm test`.
 *
 * What counts:
 * - lost: a task that did not complete with its answer, or whose branch has
 *   fewer commits than the plan has steps;
 * - duplicated: more commits than steps, or two commits with the same parent;
 * - stuck: a task left queued or running once nothing moves any more;
 * - recovery: per restart, from the kill to the API answering, and to the first
 *   task that moves after it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

export interface ChaosOptions {
  tasks: number;
  steps: number;
  /** Kills while the tasks run. */
  kills: number;
  /** Kills during a burst of POST /v1/tasks (the burst's tasks are checked too). */
  burstKills: number;
  burstSize?: number;
  /** Progress lines; silent when absent. */
  say?: (line: string) => void;
  /** How long the tasks may take after the last restart before the rest count as stuck. */
  settleMs?: number;
}

export interface Restart {
  during: "run" | "burst";
  /** From the kill to the API answering again. */
  apiMs: number;
  /** From the kill to the first task moving again. */
  movingMs: number;
}

export interface ChaosReport {
  tasks: number;
  steps: number;
  completed: number;
  lost: string[];
  duplicated: string[];
  stuck: string[];
  /** Burst tasks that a kill cut before their first step was written: failed with a clear message. */
  cutStarts: number;
  restarts: Restart[];
  /** The stack's RSS: just started, with the tasks submitted (before the first kill), at the end. */
  rssMiB: { start: number; before: number; after: number };
  dataMiB: number;
  elapsedMs: number;
}

interface CommitView {
  commit_id: string;
  parent_id: string | null;
  type: string;
}

interface TaskView {
  task_id: string;
  status: string;
  final_answer: unknown;
  error: string | null;
  metadata: { n?: number; burst?: boolean };
  updated_at: string;
}

/** Runs the chaos scenario on a fresh data folder, which it removes at the end. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const say = options.say ?? (() => undefined);
  const started = Date.now();
  const dataDir = await mkdtemp(join(tmpdir(), "stackvm-chaos-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let stack: ChildProcess | null = null;
  try {
    stack = await startStack(dataDir, port);
    const rssStart = rssMiB(stack.pid!);
    const key = readFileSync(join(dataDir, "api-key"), "utf8").trim();
    const client = new Client(url, key);
    const plan = chainPlan(options.steps);
    const expected = (n: number) => n + options.steps - 2;

    // The tasks, each with an Idempotency-Key, so that a retry after a kill is the same task.
    const ids = new Map<number, string>();
    const submit = async (n: number, burst = false) => {
      for (;;) {
        const res = await client.post(
          "/v1/tasks",
          { plan: plan(n), metadata: { n, burst } },
          `chaos-${n}`,
        );
        if (res && res.status < 300) {
          ids.set(n, (res.body as { task_id: string }).task_id);
          return;
        }
        await sleep(200);
      }
    };
    const main = Array.from({ length: options.tasks }, (_, n) => n);
    for (let i = 0; i < main.length; i += 25) {
      await Promise.all(main.slice(i, i + 25).map((n) => submit(n)));
    }
    say(`${ids.size} tasks of ${options.steps} steps submitted`);
    const rssBefore = rssMiB(stack.pid!);

    const restarts: Restart[] = [];
    const restart = async (during: Restart["during"]) => {
      killGroup(stack!);
      await exited(stack!);
      const killedAt = Date.now();
      stack = await startStack(dataDir, port);
      const apiMs = Date.now() - killedAt;
      const moved = await client.firstMove(new Date(killedAt).toISOString(), 120_000);
      const movingMs = moved ? Date.now() - killedAt : Number.NaN;
      restarts.push({ during, apiMs, movingMs });
      say(
        `restart ${restarts.length} (${during}): API in ${apiMs} ms, tasks moving in ${movingMs} ms`,
      );
    };

    let nextBurst = options.tasks;
    for (let k = 0; k < options.kills + options.burstKills; k++) {
      if (k < options.kills) {
        await sleep(1_000 + Math.random() * 4_000);
        await restart("run");
      } else {
        // Kill while a burst of POSTs is in flight; the client retries what got no answer.
        const size = options.burstSize ?? 40;
        const burst = Array.from({ length: size }, () => nextBurst++);
        const posts = Promise.all(burst.map((n) => submit(n, true)));
        await sleep(100 + Math.random() * 400);
        await restart("burst");
        await posts;
      }
    }

    // Settle: wait until every task ends, or nothing has moved for a while.
    const all = await client.settle(options.settleMs ?? 300_000, say);
    const rssAfter = rssMiB(stack.pid!);
    const report: ChaosReport = {
      tasks: all.length,
      steps: options.steps,
      completed: 0,
      lost: [],
      duplicated: [],
      stuck: [],
      cutStarts: 0,
      restarts,
      rssMiB: { start: rssStart, before: rssBefore, after: rssAfter },
      dataMiB: folderMiB(dataDir),
      elapsedMs: 0,
    };
    for (const task of all) {
      const n = task.metadata.n ?? -1;
      if (task.status === "queued" || task.status === "running") {
        report.stuck.push(task.task_id);
        continue;
      }
      if (task.metadata.burst && task.status === "failed" && /not started/.test(task.error ?? "")) {
        report.cutStarts++;
        continue;
      }
      // The plan's commit, then one per step, each the child of the one before.
      const commits = await client.commits(task.task_id);
      const steps = commits.filter((c) => c.type === "step").length;
      const parents = new Set(commits.map((c) => c.parent_id));
      const linked = commits.every((c, i) => c.parent_id === (commits[i - 1]?.commit_id ?? null));
      if (steps > options.steps || parents.size < commits.length) {
        report.duplicated.push(`${task.task_id} (${steps} step commits)`);
      } else if (
        task.status !== "completed" ||
        task.final_answer !== expected(n) ||
        steps !== options.steps ||
        commits.length !== options.steps + 1 ||
        !linked
      ) {
        report.lost.push(`${task.task_id} (${task.status}, ${steps} step commits)`);
      } else {
        report.completed++;
      }
    }
    const known = new Set(all.map((t) => t.task_id));
    for (const [n, id] of ids) if (!known.has(id)) report.lost.push(`task ${n} (${id}) is gone`);
    report.elapsedMs = Date.now() - started;
    return report;
  } finally {
    if (stack) {
      killGroup(stack);
      await exited(stack);
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A plan of `steps` steps whose answer is `n + steps - 2`: each step depends on the one before. */
function chainPlan(steps: number) {
  return (n: number) => [
    { seq_no: 0, type: "assign", parameters: { x: n } },
    ...Array.from({ length: steps - 2 }, (_, i) => ({
      seq_no: i + 1,
      type: "assign",
      parameters: { x: "${x} + 1" },
    })),
    { seq_no: steps - 1, type: "assign", parameters: { final_answer: "${x}" } },
  ];
}

export class Client {
  constructor(
    private readonly url: string,
    private readonly key: string,
  ) {}

  /** A request; null when the stack did not answer (killed, restarting). */
  async request(
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<{ status: number; body: unknown } | null> {
    try {
      const res = await fetch(`${this.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, body: await res.json() };
    } catch {
      return null;
    }
  }

  post(path: string, body: unknown, idempotencyKey: string) {
    return this.request("POST", path, body, idempotencyKey);
  }

  async tasks(): Promise<TaskView[]> {
    const all: TaskView[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/v1/tasks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await this.request("GET", query);
      if (res?.status !== 200) throw new Error(`GET /v1/tasks answered ${res?.status}`);
      const page = res.body as { tasks: TaskView[]; next_cursor: string | null };
      all.push(...page.tasks);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** Waits until some task moved after `since`; false at the deadline. */
  async firstMove(since: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const tasks = await this.tasks().catch(() => []);
      const open = tasks.some((t) => t.status === "running" || t.status === "queued");
      if (tasks.some((t) => t.updated_at > since) || (tasks.length > 0 && !open)) return true;
      await sleep(100);
    }
    return false;
  }

  /** Polls until no task is queued or running, or nothing moved for `quietMs`. */
  async settle(quietMs: number, say: (line: string) => void): Promise<TaskView[]> {
    let last = "";
    let lastChange = Date.now();
    let lastSaid = 0;
    for (;;) {
      const tasks = await this.tasks();
      const open = tasks.filter((t) => t.status === "queued" || t.status === "running");
      if (open.length === 0) return tasks;
      const signature = tasks
        .map((t) => t.updated_at)
        .sort()
        .at(-1)!;
      if (signature !== last) {
        last = signature;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > quietMs) {
        return tasks;
      }
      if (Date.now() - lastSaid > 10_000) {
        say(`${tasks.length - open.length} of ${tasks.length} tasks ended`);
        lastSaid = Date.now();
      }
      await sleep(500);
    }
  }

  async commits(taskId: string): Promise<CommitView[]> {
    const all: CommitView[] = [];
    let cursor: string | null = null;
    do {
      const res = await this.request(
        "GET",
        `/v1/tasks/${taskId}/branches/main/commits?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      if (res?.status !== 200) throw new Error(`commits of ${taskId}: ${res?.status}`);
      const page = res.body as { commits: CommitView[]; next_cursor: string | null };
      all.push(...page.commits);
      cursor = page.next_cursor;
    } while (cursor);
    // Oldest first, whichever order the API lists them in.
    const byParent = new Map(all.map((c) => [c.parent_id, c]));
    const chain: CommitView[] = [];
    for (let c = byParent.get(null); c; c = byParent.get(c.commit_id)) chain.push(c);
    return chain.length === all.length ? chain : all;
  }
}

/** Starts `main.ts` in a process group of its own and waits until it serves. */
export async function startStack(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "packages/local/src/main.ts"], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(port),
      STACKVM_DATA_DIR: dataDir,
      LOG_LEVEL: "error",
      STACKVM_MAX_RUNNING_TASKS: "1000",
      STACKVM_RATE_LIMIT_RPS: "100000",
      STACKVM_WORKER_CONCURRENCY: "8",
    },
  });
  let out = "";
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const deadline = Date.now() + 120_000;
  while (!/running at/.test(out)) {
    if (child.exitCode !== null) throw new Error(`the stack exited (${child.exitCode}): ${out}`);
    if (Date.now() > deadline) throw new Error(`the stack did not start in 120 s: ${out}`);
    await sleep(50);
  }
  return child;
}

export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // Already gone.
  }
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once("exit", () => done()));
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kib / 1024);
}

export function folderMiB(dir: string): number {
  let bytes = 0;
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else bytes += statSync(path).size;
    }
  };
  walk(dir);
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
