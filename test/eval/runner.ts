/**
 * Runs cases as ordinary tasks through the public HTTP API: each case gets
 * what it needs (a namespace with the built-ins, a knowledge base with its
 * documents, its code tools), its task is started, watched until it ends (a
 * question it asks is answered from the case), then scored and measured.
 * Everything the run creates but the tasks is deleted at the end, so a run
 * against a long-lived stack leaves only its tasks (to look at in the console).
 */
import { type ApiClient, describe } from "./api";
import { check, checkerKind } from "./checkers";
import type { EvalCase, Need, PlanningMode } from "./dataset";
import { judge } from "./judge";
import { type CaseResult, taskNumbers } from "./metrics";
import { backoff } from "./poll";

export interface RunOptions {
  api: ApiClient;
  /** A few letters that name this run's namespaces and knowledge bases. */
  runId: string;
  /** Cases run at once. */
  concurrency: number;
  /** How every task of this run is planned (sent as the task's `planning`). */
  planning: PlanningMode;
  /** How long one case may run before its task is cancelled. */
  caseTimeoutMs: number;
  /** The longest wait between two reads of a running task (reads start at 100 ms and back off to it). */
  pollMs?: number;
  /** What this machine offers that cases may need; a case needing anything else is skipped. */
  available: ReadonlySet<Need>;
  /** Called as each case ends (progress lines). */
  onResult?: (result: CaseResult) => void;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Runs every case, `concurrency` at once; the results in the cases' order. */
export async function runCases(cases: EvalCase[], options: RunOptions): Promise<CaseResult[]> {
  const shared = `ev-${options.runId}`;
  const builtins = await builtinTools(options.api);
  await options.api.expect(
    "PUT",
    `/v1/namespaces/${shared}`,
    { allowed_tools: builtins, description: "eval run" },
    [200, 201],
  );
  const cleanup: (() => Promise<unknown>)[] = [
    () => options.api.call("DELETE", `/v1/namespaces/${shared}`),
  ];
  const results: CaseResult[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const c = cases[index]!;
      // A case the eval could not follow (the API stopped answering, say) is reported, not fatal to the run.
      const result = await runCase(c, { ...options, shared, builtins, cleanup }).catch(
        (error: unknown): CaseResult => ({
          ...blank(c, options.planning),
          status: "eval_error",
          reason: (error as Error).message,
        }),
      );
      results[index] = result;
      options.onResult?.(result);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    for (const undo of cleanup.reverse()) await undo().catch(() => undefined);
  }
  return results;
}

interface CaseContext extends RunOptions {
  shared: string;
  builtins: string[];
  cleanup: (() => Promise<unknown>)[];
}

async function runCase(c: EvalCase, ctx: CaseContext): Promise<CaseResult> {
  const base = blank(c, ctx.planning);
  const missing = (c.needs ?? []).filter((n) => !ctx.available.has(n));
  if (missing.length > 0)
    return { ...base, status: "skipped", reason: `needs ${missing.join(", ")} (docs/eval.md)` };
  let namespace = ctx.shared;
  let ingest: CaseResult["ingest"];
  try {
    if (c.documents?.length || c.code_tools?.length || c.needs?.includes("fixture_server")) {
      const own = await ownNamespace(c, ctx);
      namespace = own.namespace;
      ingest = own.ingest;
    }
  } catch (error) {
    return { ...base, status: "setup_failed", reason: (error as Error).message };
  }
  const started = Date.now();
  const created = await ctx.api.call("POST", "/v1/tasks", {
    goal: c.goal,
    ...(c.plan ? { plan: c.plan } : {}),
    ...(c.inputs ? { inputs: c.inputs } : {}),
    ...(c.response_format ? { response_format: c.response_format } : {}),
    ...(c.budget ? { budget: c.budget } : {}),
    planning: ctx.planning,
    namespace,
    metadata: { eval_run: ctx.runId, eval_case: c.id },
  });
  if (created.status !== 202) {
    const reason = `POST /v1/tasks answered ${created.status}: ${describe(created.body)}`;
    return {
      ...base,
      status: "refused",
      reason,
      error: reason,
      wall_ms: Date.now() - started,
      ...(ingest ? { ingest } : {}),
    };
  }
  const taskId = created.body.task_id as string;
  const task = await watch(taskId, c, ctx);
  const timedOut = !TERMINAL.has(task.status);
  const wall = timedOut ? Date.now() - started : serverWall(task, Date.now() - started);
  if (timedOut) await ctx.api.call("POST", `/v1/tasks/${taskId}/cancel`);
  const commits = await ctx.api.commits(taskId, task.branch ?? "main").catch(() => []);
  const numbers = taskNumbers(task, commits, c.plan ? "plan" : "goal");
  const status: CaseResult["status"] = timedOut ? "timed_out" : task.status;
  const result: CaseResult = {
    ...base,
    ...numbers,
    status,
    completed: status === c.expect,
    task_id: taskId,
    final_answer: task.final_answer ?? null,
    error: task.error ?? null,
    wall_ms: wall,
    ...(ingest ? { ingest } : {}),
  };
  if (timedOut)
    return { ...result, reason: `still ${task.status} after ${ctx.caseTimeoutMs} ms: cancelled` };
  const outcome = { status: task.status, final_answer: task.final_answer, error: task.error };
  if ("judge" in c.check) {
    const verdict = await judge(c, c.check.judge, outcome, {
      api: ctx.api,
      namespace: ctx.shared,
      timeoutMs: ctx.caseTimeoutMs,
      pollMs: ctx.pollMs ?? 2000,
    });
    return {
      ...result,
      right: verdict.right && result.completed,
      reason: verdict.reason,
      judge: verdict.usage,
    };
  }
  const verdict = check(c.check, outcome);
  return { ...result, right: verdict.right && result.completed, reason: verdict.reason };
}

/** Reads the task until it ends or the case's time is up, answering its questions from the case. */
async function watch(taskId: string, c: EvalCase, ctx: CaseContext): Promise<any> {
  const deadline = Date.now() + ctx.caseTimeoutMs;
  const answers = [...(c.human_answers ?? [])];
  const pause = backoff(ctx.pollMs);
  for (;;) {
    const task = await ctx.api.expect("GET", `/v1/tasks/${taskId}`, undefined, [200]);
    if (TERMINAL.has(task.status) || Date.now() > deadline) return task;
    if (task.status === "waiting" && answers.length > 0) {
      const branch = await ctx.api.expect(
        "GET",
        `/v1/tasks/${taskId}/branches/${task.branch}`,
        undefined,
        [200],
      );
      if (branch.waiting?.kind === "input") {
        await ctx.api.expect(
          "POST",
          `/v1/tasks/${taskId}/branches/${task.branch}/input`,
          { answer: answers.shift() },
          [200],
        );
        continue;
      }
    }
    await pause();
  }
}

/**
 * A namespace of the case's own: the built-ins, the loopback host when it calls
 * the fixture server, its code tools, and a knowledge base with its documents,
 * ingested before the task starts (what ingest spent is kept apart).
 */
async function ownNamespace(
  c: EvalCase,
  ctx: CaseContext,
): Promise<{ namespace: string; ingest?: CaseResult["ingest"] }> {
  const name = `ev-${ctx.runId}-${c.id}`.slice(0, 64);
  const kb = c.documents?.length ? name : undefined;
  await ctx.api.expect(
    "PUT",
    `/v1/namespaces/${name}`,
    {
      allowed_tools: ctx.builtins,
      allowed_hosts: c.needs?.includes("fixture_server") ? ["127.0.0.1"] : [],
      description: `eval case ${c.id}`,
      ...(kb ? { knowledge_bases: [kb] } : {}),
    },
    [200, 201],
  );
  ctx.cleanup.push(() => ctx.api.call("DELETE", `/v1/namespaces/${name}`));
  for (const tool of c.code_tools ?? []) {
    await ctx.api.expect("POST", `/v1/namespaces/${name}/tools`, tool, [201]);
  }
  if (!kb) return { namespace: name };
  const started = Date.now();
  await ctx.api.expect(
    "POST",
    "/v1/knowledge-bases",
    { name: kb, description: `eval case ${c.id}` },
    [201],
  );
  ctx.cleanup.push(() => ctx.api.call("DELETE", `/v1/knowledge-bases/${kb}`));
  for (const doc of c.documents ?? []) {
    const answer = await ctx.api.upload(kb, doc);
    if (answer.status !== 202)
      throw new Error(
        `uploading ${doc.filename} answered ${answer.status}: ${describe(answer.body)}`,
      );
  }
  const deadline = Date.now() + ctx.caseTimeoutMs;
  const pause = backoff(ctx.pollMs);
  for (;;) {
    const { documents } = await ctx.api.expect(
      "GET",
      `/v1/knowledge-bases/${kb}/documents?limit=100`,
      undefined,
      [200],
    );
    const failed = documents.find((d: any) => d.status === "failed");
    if (failed)
      throw new Error(
        `ingest of ${failed.filename} failed: ${failed.error?.code}: ${failed.error?.message}`,
      );
    if (documents.every((d: any) => d.status === "ready")) {
      const usage = documents.map((d: any) => d.usage ?? {});
      const sum = (f: (u: any) => number) =>
        usage.reduce((n: number, u: any) => n + (f(u) || 0), 0);
      return {
        namespace: name,
        ingest: {
          llm_calls: sum((u) => u.llm_calls),
          tokens: sum(
            (u) => (u.input_tokens ?? 0) + (u.output_tokens ?? 0) + (u.embedding_tokens ?? 0),
          ),
          cost_usd: sum((u) => u.cost_usd),
          wall_ms: Date.now() - started,
        },
      };
    }
    if (Date.now() > deadline)
      throw new Error(`documents of ${kb} still ingesting after ${ctx.caseTimeoutMs} ms`);
    await pause();
  }
}

/**
 * A finished task's wall time as the stack saw it (from its creation to its
 * last change), which does not depend on how often the eval looked; what the
 * eval measured when the task lacks the times.
 */
function serverWall(task: any, measured: number): number {
  const ms = Date.parse(task.updated_at) - Date.parse(task.created_at);
  return Number.isFinite(ms) && ms >= 0 ? ms : measured;
}

async function builtinTools(api: ApiClient): Promise<string[]> {
  const { tools } = await api.expect("GET", "/v1/tools", undefined, [200]);
  return (tools as { name: string }[]).map((t) => t.name);
}

function blank(c: EvalCase, planning: PlanningMode): CaseResult {
  return {
    id: c.id,
    feature: c.feature,
    planning,
    checker: checkerKind(c.check),
    kind: c.plan ? "plan" : "goal",
    status: "skipped",
    completed: false,
    right: false,
    reason: "",
    plan_first_try: null,
    plan_attempts: null,
    plan_updates: 0,
    steps: 0,
    llm_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    wall_ms: 0,
    task_id: null,
  };
}
