/**
 * What the bench and the profile run: plans of assign steps, and a median.
 * One place, so that both measure the same steps.
 */

import type { TestStack } from "../support/stack";

/** A plan of `steps` assigns, each setting one variable `s{i}`, then the answer. */
export function chainPlan(steps: number, llmEvery = 0): unknown[] {
  const plan: unknown[] = [];
  for (let i = 0; i < steps; i++) {
    plan.push(
      llmEvery > 0 && i % llmEvery === 0
        ? {
            seq_no: i,
            type: "calling",
            parameters: {
              tool_name: "llm_generate",
              tool_params: { prompt: `Say ${i}` },
              output_vars: [`s${i}`],
            },
          }
        : { seq_no: i, type: "assign", parameters: { [`s${i}`]: `${i} + 1` } },
    );
  }
  plan.push({ seq_no: steps, type: "assign", parameters: { final_answer: "done" } });
  return plan;
}

/**
 * A long task's plan: `vars` assigns, each setting its own variable, then a
 * conditional jump (the LLM answers `true`) back to the first. The step budget
 * ends it (a failed branch, `budget_exceeded`), so a task runs as many steps as
 * its budget says while its state grows to `vars` variables.
 */
export function loopPlan(vars: number): unknown[] {
  const plan: unknown[] = chainPlan(vars).slice(0, vars);
  plan.push({
    seq_no: vars,
    type: "jmp",
    parameters: { condition_prompt: "Once more?", jump_if_true: 0, jump_if_false: vars + 1 },
  });
  plan.push({ seq_no: vars + 1, type: "assign", parameters: { final_answer: "done" } });
  return plan;
}

/** The scripted LLM's answer to a jump's condition: always jump back. */
export const JUMP_AGAIN = JSON.stringify({ result: true, explanation: "loop again" });

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** What a watcher needs of a system: the step dependencies it can hook. */
export interface Hookable {
  onCommit?: (
    commit: { depth: number; status_after: string },
    branch: { task_id: string; name: string },
  ) => void;
}

/**
 * Watches commits through the step function's `onCommit` hook, in the same
 * process: when each one became a head (`performance.now()`), and when a
 * branch ends. Costs nothing on the step path, unlike polling the API or the
 * table (which on a 2-core machine takes CPU from the steps it measures).
 */
export class CommitWatcher {
  readonly #times = new Map<string, number[]>();
  readonly #waiters = new Map<string, () => void>();
  readonly #ended = new Set<string>();
  readonly #atDepth = new Map<string, () => void>();

  constructor(deps: Hookable) {
    const previous = deps.onCommit;
    deps.onCommit = (commit, branch) => {
      previous?.(commit, branch);
      const key = `${branch.task_id}/${branch.name}`;
      const times = this.#times.get(key) ?? [];
      times[commit.depth] = performance.now();
      this.#times.set(key, times);
      const at = `${key}@${commit.depth}`;
      this.#atDepth.get(at)?.();
      this.#atDepth.delete(at);
      if (commit.status_after !== "running") {
        this.#ended.add(key);
        this.#waiters.get(key)?.();
      }
    };
  }

  /** Resolves when the branch (`main` unless named) has ended. */
  ended(taskId: string, branch = "main", timeoutMs = 600_000): Promise<void> {
    const key = `${taskId}/${branch}`;
    if (this.#ended.has(key)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${key} did not end`)), timeoutMs);
      this.#waiters.set(key, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Runs `fn` in the hook, synchronously, when the main branch commits at `depth`. */
  atDepth(taskId: string, depth: number, fn: () => void): void {
    this.#atDepth.set(`${taskId}/main@${depth}`, fn);
  }

  /** Gaps between consecutive commits of the main branch from depth `from` to `to` (ms). */
  gaps(taskId: string, from: number, to: number): number[] {
    const times = this.#times.get(`${taskId}/main`) ?? [];
    const out: number[] = [];
    for (let d = from + 1; d <= to; d++) out.push(times[d]! - times[d - 1]!);
    return out;
  }
}

/**
 * A task whose state is `vars` variables of `kb` KB each (issue 22): `vars / 4`
 * assigns, each setting four variables from the task's input `seed` (a 1 KB
 * string, repeated), then `small` small steps (`i` plus one), then the answer.
 * The small steps do the same work whatever the state: their overhead is what
 * the state's size costs a step.
 */
export function widePlan(vars: number, kb: number, small = 160): unknown[] {
  const plan: unknown[] = [];
  for (let s = 0; s < vars / 4; s++) {
    const parameters: Record<string, string> = {};
    for (let k = 0; k < 4; k++) parameters[`w${s * 4 + k}`] = `${"${seed}".repeat(kb)}${s * 4 + k}`;
    plan.push({ seq_no: s, type: "assign", parameters });
  }
  for (let j = 0; j < small; j++) {
    plan.push({ seq_no: plan.length, type: "assign", parameters: { i: "${i} + 1" } });
  }
  plan.push({ seq_no: plan.length, type: "assign", parameters: { final_answer: "done" } });
  return plan;
}

/** The input `widePlan` repeats: 1 KB. */
export const WIDE_SEED = "x".repeat(1024);

/**
 * One variable of about `mb` MB (issue 22), built by doubling-like steps from a
 * 1 KB input and kept in the blob store, then read by a later step (copied
 * whole into another), then the answer.
 */
export function bigValuePlan(mb: number): unknown[] {
  return [
    { seq_no: 0, type: "assign", parameters: { k100: "${seed}".repeat(100) } },
    { seq_no: 1, type: "assign", parameters: { m1: "${k100}".repeat(10) } },
    { seq_no: 2, type: "assign", parameters: { big: "${m1}".repeat(mb) } },
    { seq_no: 3, type: "assign", parameters: { copy: "${big}" } },
    { seq_no: 4, type: "assign", parameters: { final_answer: "done" } },
  ];
}

type Api = TestStack["api"];

/**
 * The CPU time this process spent during `call`, in ms (user and system). The
 * local stack, its emulators and the bench's client all run in this process,
 * so it is what the call cost the machine; on a machine shared with other work
 * it varies less than the wall time, which includes the time the process waits
 * for a core.
 */
async function cpuOf<T>(call: () => Promise<T>, sink?: number[]): Promise<T> {
  const before = process.cpuUsage();
  const out = await call();
  const used = process.cpuUsage(before);
  sink?.push((used.user + used.system) / 1000);
  return out;
}

/**
 * The median of `n` timed calls, in ms; an answer of 300 or more stops the
 * bench. With `cpu`, each call's CPU time (`cpuOf`) is pushed to it.
 */
export async function timedMedian(
  n: number,
  call: (i: number) => Promise<{ status: number }>,
  cpu?: number[],
): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const answer = await cpuOf(() => call(i), cpu);
    ms.push(performance.now() - t0);
    if (answer.status >= 300) throw new Error(`history read answered ${answer.status}`);
  }
  return median(ms);
}

/** A task's main head and the commit at `depth` (a commit's id is its branch's id and its depth). */
export async function headAndDepth(
  api: Api,
  taskId: string,
  depth: number,
): Promise<{ head: string; at: string }> {
  const newest = await api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=1`);
  const head = (newest.body.commits as Array<{ commit_id: string }>)[0]!.commit_id;
  return { head, at: head.replace(/-\d+$/, `-${depth}`) };
}

/**
 * The median time of seven forks from `from`. Each fork runs to its end before
 * the next (out of its timing), so that every fork meets an idle stack.
 */
export async function forkMedian(
  api: Api,
  watcher: CommitWatcher,
  taskId: string,
  from: string,
  plan?: unknown[],
  cpu?: number[],
): Promise<number> {
  const forks: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const answer = await cpuOf(
      () =>
        api("POST", `/v1/tasks/${taskId}/branches`, {
          from_commit: from,
          name: `fork-${i}`,
          ...(plan ? { plan } : {}),
        }),
      cpu,
    );
    forks.push(performance.now() - t0);
    if (answer.status !== 202) throw new Error(`fork answered ${answer.status}`);
    await watcher.ended(taskId, `fork-${i}`);
  }
  return median(forks);
}

/** A fork's plan of one answer: the fork's first step ends it, so its timing is the fork's. */
export const ANSWER_AT_ONCE: unknown[] = [
  { seq_no: 0, type: "assign", parameters: { final_answer: "forked" } },
];

/**
 * The floor of a read whose answer is `body`: a bare Hono app on the same
 * Node server sends the same JSON, and this process receives and parses it,
 * as `TestStack.api` does. What a history read takes beyond it is the
 * stack's own work (auth, store reads, building the answer).
 */
export async function transferFloorMs(body: unknown, n = 11): Promise<number> {
  const { Hono } = await import("hono");
  const { serve } = await import("@hono/node-server");
  const app = new Hono();
  app.get("/", (c) => c.json(body as object));
  const server = await new Promise<ReturnType<typeof serve>>((done) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => done(s));
  });
  const { port } = server.address() as { port: number };
  try {
    return await timedMedian(n, async () => {
      const answer = await fetch(`http://127.0.0.1:${port}/`);
      JSON.parse(await answer.text());
      return answer;
    });
  } finally {
    await new Promise((done) => server.close(done));
  }
}
