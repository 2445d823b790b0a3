/**
 * What one case measured, read from what the API shows of its task: the task's
 * `usage` (every LLM call, planning included), its commits (the plan commit's
 * planner answers, plan updates), and the wall time the eval saw.
 */
import type { PlanningMode } from "./dataset";

/** The numbers of one case; `docs/eval.md` says what each column means. */
export interface CaseResult {
  id: string;
  feature: string;
  /** How the task was planned: the whole plan up front, or a few instructions after each result. */
  planning: PlanningMode;
  /** The checker's kind: exact, number, regex, contains, judge, error. */
  checker: string;
  /** `goal`: the model plans; `plan`: the case gives the plan. */
  kind: "goal" | "plan";
  /** The task's end, or what stopped the case before or around it. */
  status:
    | "completed"
    | "failed"
    | "cancelled"
    | "timed_out"
    | "refused"
    | "setup_failed"
    | "skipped"
    /** The eval could not follow the case (an API request failed); `reason` says how. */
    | "eval_error";
  /** The task ended as the case expects (most expect `completed`). */
  completed: boolean;
  right: boolean;
  reason: string;
  /** The model's first plan was valid (null for a given plan). */
  plan_first_try: boolean | null;
  /** The planner's answers until a valid plan (null for a given plan). */
  plan_attempts: number | null;
  plan_updates: number;
  steps: number;
  llm_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  wall_ms: number;
  task_id: string | null;
  final_answer?: unknown;
  error?: string | null;
  /** The LLM judge's own task, apart from the case's numbers. */
  judge?: { task_id: string | null; llm_calls: number; tokens: number; cost_usd: number };
  /** Ingesting the case's documents, apart from the case's numbers. */
  ingest?: { llm_calls: number; tokens: number; cost_usd: number; wall_ms: number };
}

/** The part of a result read from the task and its commits. */
export type TaskNumbers = Pick<
  CaseResult,
  | "plan_first_try"
  | "plan_attempts"
  | "plan_updates"
  | "steps"
  | "llm_calls"
  | "input_tokens"
  | "output_tokens"
  | "cost_usd"
>;

/**
 * The numbers of a finished task from `GET /v1/tasks/{id}` and the commits of
 * its result branch (oldest first). Planner answers are the plan commit's LLM
 * calls of purpose `plan` (each a whole answer: schema repairs and validation
 * repairs alike); when planning failed, the commits that carry such calls.
 *
 * @example
 * taskNumbers(task, commits, "goal") // { plan_first_try: true, plan_attempts: 1, … }
 */
export function taskNumbers(task: any, commits: any[], kind: "goal" | "plan"): TaskNumbers {
  const usage = task?.usage ?? {};
  const planCalls = commits
    .flatMap((c) => (c.llm_calls ?? []) as { purpose: string }[])
    .filter((call) => call.purpose === "plan").length;
  const planCommit = commits.find((c) => c.type === "plan");
  const repairs = Number(planCommit?.details?.attempts ?? 1);
  return {
    plan_first_try:
      kind === "plan" ? null : planCommit !== undefined && planCalls === 1 && repairs === 1,
    plan_attempts: kind === "plan" ? null : Math.max(planCalls, planCommit ? repairs : 0),
    plan_updates: commits.filter((c) => c.type === "plan_update").length,
    steps: usage.steps ?? 0,
    llm_calls: usage.llm_calls ?? 0,
    input_tokens: usage.input_tokens ?? 0,
    output_tokens: usage.output_tokens ?? 0,
    cost_usd: usage.cost_usd ?? 0,
  };
}

/** Totals over results: counts, sums and the share of cases right. */
export interface Totals {
  cases: number;
  ran: number;
  skipped: number;
  goal_cases: number;
  plan_first_try: number;
  plan_attempts: number;
  plan_updates: number;
  completed: number;
  right: number;
  steps: number;
  llm_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  wall_ms: number;
  judge_llm_calls: number;
  judge_cost_usd: number;
  ingest_llm_calls: number;
  ingest_cost_usd: number;
}

/** Adds up results (skipped cases count only as skipped). */
export function totalsOf(results: CaseResult[]): Totals {
  const ran = results.filter((r) => r.status !== "skipped");
  const sum = (f: (r: CaseResult) => number) => ran.reduce((n, r) => n + f(r), 0);
  return {
    cases: results.length,
    ran: ran.length,
    skipped: results.length - ran.length,
    goal_cases: ran.filter((r) => r.kind === "goal").length,
    plan_first_try: ran.filter((r) => r.plan_first_try === true).length,
    plan_attempts: sum((r) => r.plan_attempts ?? 0),
    plan_updates: sum((r) => r.plan_updates),
    completed: ran.filter((r) => r.completed).length,
    right: ran.filter((r) => r.right).length,
    steps: sum((r) => r.steps),
    llm_calls: sum((r) => r.llm_calls),
    input_tokens: sum((r) => r.input_tokens),
    output_tokens: sum((r) => r.output_tokens),
    cost_usd: round(sum((r) => r.cost_usd)),
    wall_ms: sum((r) => r.wall_ms),
    judge_llm_calls: sum((r) => r.judge?.llm_calls ?? 0),
    judge_cost_usd: round(sum((r) => r.judge?.cost_usd ?? 0)),
    ingest_llm_calls: sum((r) => r.ingest?.llm_calls ?? 0),
    ingest_cost_usd: round(sum((r) => r.ingest?.cost_usd ?? 0)),
  };
}

function round(n: number): number {
  return Math.round(n * 1e8) / 1e8;
}
