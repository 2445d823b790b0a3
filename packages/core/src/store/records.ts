/**
 * The stored shapes of tasks, branches and commits (internal: the API shapes in
 * `model.ts` are projections of these).
 */
import type {
  Budget,
  LlmCall,
  LlmPurpose,
  NamespaceConfig,
  ResponseFormat,
  Status,
  Usage,
} from "../model";
import type { Instruction, Plan } from "../plan/schema";

export interface TaskRecord {
  pk: string;
  sk: "TASK";
  gsi1pk: string;
  gsi1sk: string;
  tenant_id: string;
  task_id: string;
  goal: string | null;
  /** The name its client gave (`CreateTaskInput.name`); absent on tasks written before names. */
  name?: string | null;
  /** What lists call it (`service/task-title.ts`); absent on tasks written before titles. */
  title?: string;
  namespace: string;
  status: Status;
  /** The result branch. */
  branch: string;
  final_answer: unknown;
  error: string | null;
  response_format: ResponseFormat;
  metadata: Record<string, unknown>;
  webhook_url: string | null;
  evaluate: boolean;
  /** Usage of branches that were deleted, so the task's sum keeps them. */
  deleted_usage: Usage;
  /** Exempt from retention (`service/retention.ts`); absent: not kept. */
  keep?: boolean;
  /** The thread this task is a turn of (`service/threads.ts`); absent: none, or its first turn before a continue. */
  thread?: TaskThread | null;
  created_at: string;
  updated_at: string;
}

/** A turn's place in its thread: the thread, its number, and the answer it continues. */
export interface TaskThread {
  thread_id: string;
  turn: number;
  parent: { task_id: string; branch: string };
}

/** What a turn's planner is told of the turns before it, oldest first (bounded when written). */
export interface ThreadHistory {
  thread_id: string;
  turns: Array<{ task_id: string; branch: string; goal: string | null; answer: unknown }>;
  /** Earlier turns left out of `turns` to keep it small. */
  omitted: number;
}

/** What the first step of a branch must do before running instructions. */
export type PendingWork =
  | { kind: "plan" }
  | {
      kind: "replan";
      suggestion: string;
      /** `adaptive`: an adaptive task's plan ran out, and the planner writes what comes next. */
      reason: "fork" | "error" | "evaluation" | "adaptive";
      /** The failed step, when an error caused the update: the planner is told of it. */
      error?: { code: string; message: string; seq_no: number | null };
    }
  | { kind: "replace_plan"; plan: Plan }
  | { kind: "replace_step"; seq_no: number; instruction: Instruction }
  /** The branch has its answer and `evaluate` is on: the judge writes an `evaluation` commit. */
  | { kind: "evaluate" };

/** What every step of a branch needs, copied at creation so that a step reads one item. */
export interface BranchConfig {
  goal: string | null;
  namespace: NamespaceConfig;
  response_format: ResponseFormat;
  budget: Budget;
  inputs: Record<string, unknown>;
  webhook_url: string | null;
  evaluate: boolean;
  /** How many evaluation rounds led to this branch (0 for main). */
  evaluation_round: number;
  /** A turn of a thread: the turns before it, which its planner is shown. */
  thread?: ThreadHistory;
  /**
   * The task's own `replan`: false, a failed step is not repaired by a plan
   * update; true, it is even when the namespace turned repair off; absent, the
   * namespace's (`namespace.replan`), else true.
   */
  replan?: boolean;
}

export interface BranchRecord {
  pk: string;
  sk: string;
  /** While running: the sweep index (see `sweepIndex`). */
  gsi1pk?: string;
  gsi1sk?: string;
  tenant_id: string;
  task_id: string;
  name: string;
  /** Internal id, unique per branch ever created in the task: commits are keyed by it. */
  bid: string;
  status: Status;
  head: string | null;
  /** The head's parent: lets a redelivered message for it resume a stalled branch. */
  prev_head: string | null;
  /** Depth of the head (-1 before the first commit). */
  depth: number;
  pc: number | null;
  plan: Plan | null;
  plan_commit: string | null;
  /**
   * Only on branches written before issue 22: the variables at the head (large
   * values as blob refs). Neither read nor written since: the head's windows say
   * where each value lives (`vm/variables.ts`); a branch from before keeps what
   * it had, and one written since has none.
   */
  vars?: Record<string, unknown>;
  /** Only on branches written before issue 22: for each variable, the depth that set it. Never read. */
  var_depth?: Record<string, number>;
  /** Ids of the commits at `chainDepths(depth)`. */
  chain: string[];
  /** Ancestor segments for listing commits back to the root: newest first. */
  lineage: Array<{ bid: string; name: string; upto: number }>;
  forked_from: { branch: string; commit_id: string } | null;
  final_answer: unknown;
  error: string | null;
  usage: Usage;
  /** Plan updates done on this branch after errors. */
  updates: number;
  pending: PendingWork | null;
  cancel_requested: boolean;
  config: BranchConfig;
  /** While `waiting`: what the branch waits for (`vm/wait.ts`); cleared by the next commit. */
  waiting?: WaitingRecord | null;
  /** `waiting.id`, at the top of the item for conditions (an answer names the wait it answers). */
  waiting_id?: string | null;
  /** While a parallel group runs: its members and which are done (`vm/group.ts`); cleared by the commit that leaves it. */
  group?: GroupRecord | null;
  /** `group.base`, at the top of the item for conditions. */
  group_base?: string | null;
  /** The base of the group that just ended, until the next commit (`vm/group.ts` `joinedAt`). */
  group_joined?: string | null;
  /** While a failed step waits to be tried again (`vm/retrying.ts`); cleared by the next commit. */
  retrying?: RetryingRecord | null;
  /** The LLM call a step has in flight (`vm/in-flight.ts`); null once it ended. */
  llm_call?: InFlightRecord | null;
  /** Counts the writes of `retrying`, so that two failing at once do not lose each other's record. */
  retry_version?: number;
  /** Evaluation verdict of this branch's answer, when evaluated. */
  verdict: { accept: boolean; score: number; suggestion: string | null } | null;
  created_at: string;
  updated_at: string;
}

export interface CommitRecord {
  pk: string;
  sk: string;
  commit_id: string;
  parent_id: string | null;
  branch: string;
  bid: string;
  depth: number;
  type: "plan" | "step" | "plan_update" | "error" | "evaluation" | "cancel";
  seq_no: number | null;
  instruction: unknown;
  inputs: unknown;
  outputs: Record<string, unknown>;
  /**
   * The variables set in the depths `(depth - lowbit(depth), depth]` with their values
   * after this commit (see `vm/fenwick.ts`); absent where it equals `outputs`. A large
   * window is stored whole in the blob store (a `{ $blob }` reference).
   */
  window?: Record<string, unknown>;
  /**
   * Written since issue 22, on commits with `lowbit(depth) > 1`: the variables set
   * in `(depth - lowbit(depth), depth]` but not by this commit, each with the id
   * of the commit whose outputs hold its value. Names, not values: a value is
   * stored once, on the commit that set it. Over its limit, stored whole in the
   * blob store (a `{ $blob }` reference). `window` then holds only the values a
   * branch kept on its item from before (`BranchRecord.vars`).
   */
  window_ids?: Record<string, string>;
  chain: string[];
  /** The plan, on commits that set it. */
  plan?: Plan;
  plan_commit: string | null;
  pc_before: number | null;
  pc_after: number | null;
  error: unknown;
  llm_calls: LlmCall[];
  duration_ms: number;
  details?: Record<string, unknown>;
  /** The branch's status once this commit is the head. */
  status_after: Status;
  /** The branch's pending work once this commit is the head (a plan update after an error). */
  pending_after?: PendingWork | null;
  /** The branch's count of plan updates once this commit is the head. */
  updates_after?: number;
  final_answer?: unknown;
  created_at: string;
}

/** The mark of a branch whose group runs (`BranchRecord.group`). */
export interface GroupRecord {
  /** The commit the group started after: every member runs against its variables. */
  base: string;
  /** The members that run at once, by seq_no in plan order. */
  members: number[];
  /** `"{seq_no}": true` once that member's result is held. */
  done: Record<string, boolean>;
  started_at: string;
}

/** What the branch holds while a call runs (`BranchRecord.llm_call`). */
export interface InFlightRecord {
  purpose: LlmPurpose;
  model: string;
  attempt: number;
  /** ISO 8601: when this attempt started. */
  started_at: string;
  /** Streamed pieces received (one token each on OpenAI, llama.cpp, Ollama); null when the call does not stream. */
  tokens_so_far: number | null;
}

/** What a retrying branch shows (`Branch.retrying`). */
export interface RetryingRecord {
  /** The delivery of the step that failed last, 1 for the first. */
  attempt: number;
  /** The most attempts the queue makes before the step goes to the dead-letter queue. */
  max_attempts: number;
  error: { code: string; message: string };
  /** When the step is tried again (ISO 8601). */
  next_attempt_at: string;
  /** When the first of these failures happened. */
  since: string;
  /**
   * The LLM calls the failed deliveries made (answered ones and failed ones), so
   * that the commit that ends these failures records them: the next commit's
   * `llm_calls` start with these, and `usage` counts them.
   */
  llm_calls?: LlmCall[];
}

/** Where an answer came from. */
export type AnswerSource = "api" | "resume_url" | "console" | "cli";

/** What a waiting branch waits for (`BranchRecord.waiting`). */
export interface WaitingRecord {
  /** Random: names this wait in resume tokens and wake messages. */
  id: string;
  kind: "input" | "time";
  /** The head when the wait began; the wait's commit will be its child. */
  head: string | null;
  seq_no: number | null;
  started_at: string;
  /** `time`: when the branch resumes. */
  until?: string;
  /** `input`: the question, the JSON Schema of its answer, when it times out. */
  question?: string;
  schema?: Record<string, unknown>;
  expires_at?: string;
  /** `input`, once answered: the value (valid against `schema`), its source and time. */
  answer?: { value: unknown; via: AnswerSource; at: string };
}
