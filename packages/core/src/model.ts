/**
 * The records of the system as clients see them (`shared/spec/http-api.md`).
 * The same schemas validate the store's items on read, generate the OpenAPI
 * document and type the API's answers.
 */
import * as z from "zod";
import { STATUSES, TERMINAL_STATUSES, ZERO_USAGE } from "./model-values";
import { PlanCompat } from "./plan/compat-mode";
import { PlanningMode } from "./plan/planning-mode";
import { Plan } from "./plan/schema";
import { Budget, LlmPurpose, ResponseFormat } from "./record-fields";
import { SandboxLimitsRequest } from "./sandbox/protocol";

export { Budget, LlmPurpose, ResponseFormat, TERMINAL_STATUSES, ZERO_USAGE };

export const Status = z.enum(STATUSES);
export type Status = z.infer<typeof Status>;

export const BranchName = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, "a branch name is 1 to 64 of a-z, 0-9, _ and -");

export const Usage = z.object({
  steps: z.number().int(),
  llm_calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number(),
});
export type Usage = z.infer<typeof Usage>;

export const LlmCall = z.object({
  purpose: LlmPurpose,
  model: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number(),
  latency_ms: z.number(),
  /** Tries in all, failed ones included (each failed try waited, and was asked of the server). */
  attempts: z.number().int().optional(),
  /**
   * Only on a call that failed in every attempt (the server down, slow past
   * `LLM_TIMEOUT_MS`, answering 5xx, refusing): what the last attempt got. Its
   * tokens are what the server reported for it (none, when it answered no
   * completion). A step that goes on after it (a later delivery, a plan update)
   * keeps it in the commit, so the calls made are all there.
   */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /**
   * The id of the call's stored prompt and answer, read at
   * `GET /v1/tasks/{task_id}/commits/{commit_id}/llm-calls/{n}`; absent when none
   * was kept (embeddings, traces turned off).
   */
  trace: z.string().optional(),
});
export type LlmCall = z.infer<typeof LlmCall>;

/** One outgoing webhook of a task (one per terminal status), with its delivery attempts. */
export const WebhookDelivery = z.object({
  webhook_id: z.string(),
  type: z.enum(["task.completed", "task.failed", "task.cancelled", "task.waiting"]),
  /** `pending` while attempts go on, `delivered` after a 2xx, `failed` after the last attempt. */
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      at: z.string(),
      /** The receiver's HTTP status, or null when it did not answer. */
      status: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number(),
    }),
  ),
  created_at: z.string(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** The task's `webhook_url` and what was sent to it. */
export const TaskWebhook = z.object({ url: z.string(), deliveries: z.array(WebhookDelivery) });
export type TaskWebhook = z.infer<typeof TaskWebhook>;

/** Why a branch that is not moving waits: its last step failed and is tried again (`vm/retrying.ts`). */
export const Retrying = z.object({
  /** The attempt that failed last, 1 for the first. */
  attempt: z.number().int(),
  /** Attempts the queue makes in all before the branch fails. */
  max_attempts: z.number().int(),
  error: z.object({ code: z.string(), message: z.string() }),
  /** When the step is tried again (ISO 8601). */
  next_attempt_at: z.string(),
  /** When the first of these failures happened. */
  since: z.string(),
});
export type Retrying = z.infer<typeof Retrying>;

/**
 * The LLM call a running branch has in flight, while the model thinks: which
 * call, which attempt, for how long, and how much of its answer has arrived.
 */
export const LlmCallInFlight = z.object({
  /** What the call is for: `plan`, `plan_update`, `llm_generate`, `jmp_condition`, `code`, ... */
  purpose: LlmPurpose,
  model: z.string(),
  /** 1 for the first try; a retry of the same call counts up. */
  attempt: z.number().int(),
  /** When this attempt started (ISO 8601). */
  started_at: z.string(),
  /** Milliseconds since `started_at`, as the server answering this request counts them. */
  elapsed_ms: z.number().int(),
  /**
   * Pieces of the answer received so far when the call streams (one token each
   * on OpenAI, llama.cpp and Ollama; written at most once a second); null when
   * it does not stream.
   */
  tokens_so_far: z.number().int().nullable(),
});
export type LlmCallInFlight = z.infer<typeof LlmCallInFlight>;

/** A task waiting for one of its tenant's running slots (`max_running_tasks`). */
export const SlotWait = z.object({
  /** 1 for the next task to start. */
  position: z.number().int(),
  /** The tenant's `max_running_tasks`, all taken. */
  max_running_tasks: z.number().int().nullable(),
});
export type SlotWait = z.infer<typeof SlotWait>;

export const Task = z.object({
  task_id: z.string(),
  goal: z.string().nullable(),
  /** The name its client gave when starting it (a trigger or schedule gives its own to a plan); null for none. */
  name: z.string().nullable(),
  /**
   * What lists call the task: its name, else its goal, else its plan's first
   * `llm_generate` prompt, else `plan task {task_id}` (one line, at most 120 characters).
   */
  title: z.string(),
  namespace: z.string(),
  status: Status,
  branch: z.string(),
  final_answer: z.unknown().nullable(),
  error: z.string().nullable(),
  response_format: ResponseFormat,
  metadata: z.record(z.string(), z.unknown()),
  usage: Usage,
  created_at: z.string(),
  updated_at: z.string(),
  /** Only on a task with `webhook_url`, read one at a time (not in lists). */
  webhook: TaskWebhook.optional(),
  /** Only while the result branch's last step failed and will be tried again. */
  retrying: Retrying.optional(),
  /** Only while the result branch waits on an LLM call (the model thinks). */
  llm_call: LlmCallInFlight.optional(),
  /** Only while the task is `queued` for a running slot, read one at a time (not in lists). */
  waiting_for_slot: SlotWait.optional(),
  /** Only on a task exempt from retention (`keep`). */
  keep: z.literal(true).optional(),
  /** Only on a task planned adaptively (its own `planning` or its namespace's); absent: planned up front. */
  planning: PlanningMode.optional(),
  /** Only on a turn of a thread after the first: the thread, its turn number, the task and branch it continues. */
  thread: z
    .object({
      thread_id: z.string(),
      turn: z.number().int(),
      parent: z.object({ task_id: z.string(), branch: z.string() }),
    })
    .optional(),
});
export type Task = z.infer<typeof Task>;

/** What a `waiting` branch waits for (plan language 1.1: `ask_human`, `wait`). */
export const Waiting = z.object({
  kind: z.enum(["input", "time"]),
  /** `input`: the question and the JSON Schema its answer must match. */
  question: z.string().nullable(),
  schema: z.record(z.string(), z.unknown()).nullable(),
  /** `time`: when the branch resumes (ISO 8601). */
  until: z.string().nullable(),
  /** `input`: when the question times out (then its default is used, or the step fails). */
  expires_at: z.string().nullable(),
});
export type Waiting = z.infer<typeof Waiting>;

/** A parallel group of a branch while it runs (plan language 1.1: groups). */
export const RunningGroup = z.object({
  /** The commit the members run after. */
  base: z.string(),
  /** The members that run at once, by seq_no in plan order. */
  members: z.array(z.number().int()),
  /** The members whose result is held, to be committed in plan order once all are. */
  done: z.array(z.number().int()),
  started_at: z.string(),
});
export type RunningGroup = z.infer<typeof RunningGroup>;

export const Branch = z.object({
  name: z.string(),
  status: Status,
  head: z.string().nullable(),
  /** Only while the branch is `waiting` (or `queued` for a slot after its wait). */
  waiting: Waiting.optional(),
  /** Only while its last step failed and will be tried again. */
  retrying: Retrying.optional(),
  /** Only while the branch waits on an LLM call (the model thinks). */
  llm_call: LlmCallInFlight.optional(),
  /** Only while a parallel group of the branch runs (until its last member is committed). */
  group: RunningGroup.optional(),
  forked_from: z.object({ branch: z.string(), commit_id: z.string() }).nullable(),
  final_answer: z.unknown().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Branch = z.infer<typeof Branch>;

export const CommitType = z.enum(["plan", "step", "plan_update", "error", "evaluation", "cancel"]);
export type CommitType = z.infer<typeof CommitType>;

export const Commit = z.object({
  commit_id: z.string(),
  parent_id: z.string().nullable(),
  branch: z.string(),
  type: CommitType,
  seq_no: z.number().int().nullable(),
  instruction: z.unknown().nullable(),
  inputs: z.unknown().nullable(),
  outputs: z.record(z.string(), z.unknown()),
  pc_before: z.number().int().nullable(),
  pc_after: z.number().int().nullable(),
  error: z.unknown().nullable(),
  llm_calls: z.array(LlmCall),
  duration_ms: z.number(),
  created_at: z.string(),
  /** What else the step recorded: a jump's explanation, a plan's reasoning, code attempts. */
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Commit = z.infer<typeof Commit>;

export const State = z.object({
  pc: z.number().int().nullable(),
  variables: z.record(z.string(), z.unknown()),
  plan: Plan.or(z.array(z.unknown())),
  completed: z.boolean(),
});
export type State = z.infer<typeof State>;

export const Diff = z.object({
  added: z.record(z.string(), z.unknown()),
  removed: z.record(z.string(), z.unknown()),
  changed: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
  plan_changed: z.boolean(),
  pc: z.object({ from: z.number().int().nullable(), to: z.number().int().nullable() }),
});
export type Diff = z.infer<typeof Diff>;

/** What a namespace allows; copied into each branch when a task starts. */
export const NamespaceConfig = z.object({
  name: z.string(),
  allowed_tools: z.array(z.string()),
  allowed_hosts: z.array(z.string()),
  description: z.string().default(""),
  /** The namespace's guidance for the planner, added to its plan and plan-update prompts. */
  planner_instructions: z.string().optional(),
  /** Names of the namespace's code tools (allowed without being listed). */
  code_tools: z.array(z.string()).default([]),
  /** Names of the namespace's HTTP tools (allowed without being listed). */
  http_tools: z.array(z.string()).default([]),
  /** Names of the namespace's MCP servers, whose tools plans call as `server.tool`. */
  mcp_servers: z.array(z.string()).default([]),
  /** Lower sandbox limits for the namespace's code; the sandbox function's own ceiling still caps them. */
  sandbox_limits: SandboxLimitsRequest.optional(),
  /** The knowledge bases `vector_search` and `retrieve_knowledge_graph` may read; absent: all for `default`, none for others. */
  knowledge_bases: z.array(z.string()).optional(),
  /** Members of a parallel group that run at once (`plan/groups.ts`); absent: 4. */
  parallel_width: z.number().int().optional(),
  /** Days after its end a finished task is deleted (`service/retention.ts`); absent: the tenant's. */
  retention_days: z.number().int().optional(),
  /**
   * `stackvm`: StackVM compatibility mode (plan-language.md): references nothing
   * sets are warnings, and run as the text they were written. Absent: `strict`.
   */
  plan_compat: PlanCompat.optional(),
  /** `adaptive`: the planner writes the next instruction or few after each result. Absent: `up_front`. */
  planning: PlanningMode.optional(),
  /** False: failed steps of its tasks are not repaired by a plan update, unless a task says `replan: true`. Absent: true. */
  replan: z.boolean().optional(),
});
export type NamespaceConfig = z.infer<typeof NamespaceConfig>;
