/**
 * Starting, reading, cancelling and deleting tasks. A task is a record plus its
 * branches; starting one writes both and enqueues the first step of `main`.
 */
import * as z from "zod";
import { ConflictError, isErrorKind, NotFoundError, ValidationError } from "../errors";
import { digest, newBranchId, newTaskId } from "../ids";
import { llmTracePrefix } from "../llm/trace";
import {
  Budget,
  type Status,
  type Task,
  type TaskWebhook,
  TERMINAL_STATUSES,
  ZERO_USAGE,
} from "../model";
import { PlanCompat } from "../plan/compat-mode";
import type { PlanProblem } from "../plan/problems";
import { type Plan, VariableName } from "../plan/schema";
import { validatePlan } from "../plan/validate";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import {
  branchKey,
  idempotencyKey,
  sweepIndex,
  taskKey,
  taskPk,
  tasksIndexPk,
} from "../store/keys";
import type { BranchConfig, BranchRecord, TaskRecord } from "../store/records";
import { clearStart, markStart } from "../store/task-starts";
import type { TaskStore } from "../store/task-store";
import { spilledForm, spillRecord, taskBlobPrefix } from "../store/values";
import type { Tool } from "../tools/tool";
import { enqueueNext } from "../vm/enqueue";
import { normalizeFormat, parseTrailingFormat } from "../vm/goal-text";
import { DisplayName } from "./display-text";
import type { NamespaceService, ResolvedNamespace } from "./namespaces";
import type { Presenter } from "./present";
import type { TaskAdmission } from "./quotas";
import { stableJson } from "./stable-json";
import { checkRecordFits, checkTaskFields } from "./task-sizes";
import { failUnstarted } from "./task-starts";
import { taskTitle } from "./task-title";

export const CreateTaskInput = z
  .object({
    goal: z.string().min(1).max(10_000).optional(),
    plan: z.array(z.unknown()).optional(),
    name: DisplayName(200)
      .optional()
      .describe(
        "A short name for the task, its title in lists; without one, a task started from a plan is titled by the plan's first llm_generate prompt. Plain text: a control character (ESC, a new line) or an unpaired surrogate is refused",
      ),
    inputs: z.record(VariableName, z.unknown()).default({}),
    // null is absent, as StackVM's own API example sends it.
    response_format: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe('How to answer, e.g. {"lang": "Japanese"}; null is the same as absent'),
    namespace: z.string().min(1).max(64).default("default"),
    /** Overrides the namespace's `plan_compat` for this task (plan-language.md). */
    plan_compat: PlanCompat.optional().describe(
      "stackvm: run the plan in StackVM compatibility mode (docs/plan-language.md); absent: the namespace's plan_compat",
    ),
    budget: Budget.default({ max_steps: 200 }),
    webhook_url: z.string().url().max(2048).optional(),
    evaluate: z.boolean().default(false),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .strict()
  .refine((t) => t.goal !== undefined || t.plan !== undefined, {
    message: "give a goal, a plan, or both",
    path: ["goal"],
  });
export type CreateTaskInput = z.infer<typeof CreateTaskInput>;

export interface TaskServiceDeps {
  store: TaskStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  namespaces: NamespaceService;
  presenter: Presenter;
  /** Built-in tools (code tools come from the namespace). */
  tools: ReadonlyMap<string, Tool>;
  /**
   * Checks an outgoing webhook URL as delivery's guard will (https to a public host, the
   * addresses its name resolves to); rejects with ValidationError (`bad_webhook_url`).
   */
  checkWebhookUrl: (url: string) => void | Promise<void>;
  /** Quotas: the month's budget and running slots (`quotas.ts`); none: no limits. */
  admission?: TaskAdmission;
  /** The outgoing webhook deliveries of a task, shown on it (`webhooks.ts`). */
  deliveries?: (tenant: string, taskId: string) => Promise<TaskWebhook["deliveries"]>;
  /** False when no LLM is configured: a goal (which needs a planner) is refused at once. */
  llmConfigured?: boolean;
}

/** A task started (or the same start again), with the warnings of its plan. */
export interface StartedTask {
  task: TaskRecord;
  replayed: boolean;
  /** The plan validator's warnings (none for a goal): the same as POST /v1/plans/validate answers. */
  warnings: PlanProblem[];
}

export class TaskService {
  constructor(private readonly deps: TaskServiceDeps) {}

  /**
   * Validates a plan against the namespace's tools; 422 with every problem. `compat`:
   * the branch's own mode (a task may override its namespace's); absent, the namespace's.
   */
  async validate(
    tenant: string,
    namespace: string,
    plan: unknown,
    inputs: Iterable<string>,
    compat?: PlanCompat,
  ): Promise<Plan> {
    const resolved = await this.deps.namespaces.resolve(tenant, namespace);
    return this.checkPlan(resolved, plan, inputs, compat).plan;
  }

  /**
   * Validates a plan against a namespace already read (`NamespaceService.resolve`),
   * for callers that need the namespace anyway; 422 with every problem.
   */
  validateIn(namespace: ResolvedNamespace, plan: unknown, inputs: Iterable<string>): Plan {
    return this.checkPlan(namespace, plan, inputs).plan;
  }

  /**
   * {@link validateIn} with the warnings of a plan that passed (StackVM forms
   * rewritten, keys the VM ignores, instructions never reached); 422 with every problem.
   */
  checkPlan(
    namespace: ResolvedNamespace,
    plan: unknown,
    inputs: Iterable<string>,
    compat: PlanCompat = namespace.config.plan_compat ?? "strict",
  ): { plan: Plan; warnings: PlanProblem[] } {
    const result = validatePlan(plan, {
      tools: namespace.tools.all,
      allowedTools: namespace.tools.allowed,
      inputs: new Set(inputs),
      compat,
    });
    if (!result.ok) {
      throw new ValidationError(
        "invalid_plan",
        `the plan has ${result.problems.length} problem(s): ${result.problems
          .slice(0, 3)
          .map((p) => `${p.path}: ${p.message}`)
          .join("; ")}`,
        { problems: result.problems, warnings: result.warnings },
      );
    }
    return { plan: result.plan, warnings: result.warnings };
  }

  /**
   * Starts a task, once per idempotency key: the same key with the same body
   * within 24 hours answers the first task (`replayed`); another body, 409.
   */
  async start(
    tenant: string,
    input: CreateTaskInput,
    idempotencyKey: string | null,
    taskId?: string,
  ): Promise<StartedTask> {
    return this.create(tenant, input, taskId, idempotencyKey);
  }

  /**
   * Starts a task: writes it and its `main` branch, enqueues the first step (or,
   * past the tenant's running tasks, lists it as waiting). All or nothing: sizes
   * are checked before the first write, and a failure after it undoes what was
   * written; a start cut short by a crash is repaired by the sweep
   * (`task-starts.ts`). A `taskId` that exists already is the same start made
   * again (a trigger delivery or a schedule run retried, a client's retry with
   * its Idempotency-Key): it finishes what that start began and answers the task
   * with `replayed`.
   */
  async create(
    tenant: string,
    input: CreateTaskInput,
    givenTaskId?: string,
    idempotencyKey: string | null = null,
  ): Promise<StartedTask> {
    let taskId = givenTaskId ?? newTaskId();
    if (input.plan === undefined) this.requireLlm();
    const namespace = await this.deps.namespaces.resolve(tenant, input.namespace);
    // The task's own plan_compat wins; the branch's copy of the namespace carries it to the VM.
    const resolved: ResolvedNamespace = input.plan_compat
      ? { ...namespace, config: { ...namespace.config, plan_compat: input.plan_compat } }
      : namespace;
    if (input.webhook_url) await this.deps.checkWebhookUrl(input.webhook_url);
    checkTaskFields(input);
    const parsed = input.goal ? parseTrailingFormat(input.goal) : null;
    const responseFormat = normalizeFormat(input.response_format ?? parsed?.format ?? {});
    const checked =
      input.plan === undefined
        ? null
        : this.checkPlan(resolved, input.plan, Object.keys(input.inputs));
    const plan = checked?.plan ?? null;
    const warnings = checked?.warnings ?? [];
    const left = this.deps.admission ? await this.deps.admission.budgetLeft(tenant) : {};
    const now = new Date(this.deps.clock.now()).toISOString();
    const records = (id: string) => {
      const task = newTask(tenant, id, input, responseFormat, now);
      const config: BranchConfig = {
        goal: parsed?.goal ?? input.goal ?? null,
        namespace: resolved.config,
        response_format: responseFormat,
        budget: capBudget(input.budget, left),
        inputs: input.inputs,
        webhook_url: input.webhook_url ?? null,
        evaluate: input.evaluate,
        evaluation_round: 0,
      };
      const branch = newBranch(tenant, id, "main", config, now);
      branch.plan = plan;
      return { task, branch };
    };
    // Every size, before the first write: the records as they will be stored.
    const draft = records(taskId);
    checkRecordFits(draft.task, "the task's goal, metadata and response_format");
    const stored = { ...draft.branch.config, inputs: spilledForm(input.inputs) };
    checkRecordFits(
      { ...draft.branch, config: stored },
      "the task's plan, goal, inputs and response_format",
    );
    let replayed = false;
    if (idempotencyKey !== null) {
      const first = await this.claimIdempotencyKey(tenant, idempotencyKey, input, taskId);
      if (first !== taskId) {
        // The key was used with this body before: answer that task. If a crash
        // left the key without its task, start the task now, under the key's id.
        replayed = true;
        taskId = first;
      }
    }
    const { task, branch } = records(taskId);
    // Only an id chosen before (by the caller or an idempotency key) can exist already.
    const existing =
      givenTaskId !== undefined || replayed ? await this.deps.store.getTask(tenant, taskId) : null;
    if (existing) return { task: await this.resume(existing, branch), replayed: true, warnings };
    await markStart(this.deps.store.items, tenant, taskId, now);
    let written = true;
    try {
      branch.config.inputs = await this.spillInputs(branch);
      const admitted = this.deps.admission ? await this.deps.admission.claim(tenant, taskId) : true;
      if (admitted) markRunning(branch, now);
      written = await this.deps.store.createTask(task, branch).then(
        () => true,
        (error: unknown) => {
          if (isErrorKind(error, "conflict")) return false;
          throw error;
        },
      );
      if (written && admitted) await enqueueNext(this.deps, branch, null);
      else if (written) await this.deps.admission?.wait(tenant, taskId, now);
    } catch (error) {
      await this.undoStart(tenant, taskId).catch(() => {
        // The marker stays: the sweep finishes the undo (`repairStart`).
      });
      throw error;
    }
    if (!written) {
      // Two starts of the same id at once: the other wrote first, and finishes.
      const other = await this.deps.store.getTask(tenant, taskId);
      if (!other) throw new ConflictError(`task '${taskId}' is being started by another request`);
      return { task: await this.resume(other, branch), replayed: true, warnings };
    }
    await clearStart(this.deps.store.items, tenant, taskId);
    return { task, replayed, warnings };
  }

  /** False when no LLM is configured (a goal is then refused with 422 `llm_not_configured`). */
  get llmConfigured(): boolean {
    return this.deps.llmConfigured !== false;
  }

  /**
   * Refuses work that needs a planner when no LLM is configured, saying what to set;
   * `need` says what needs it, `instead` what works without one.
   */
  requireLlm(
    need = "a goal needs one to write its plan",
    instead = "send a plan instead of a goal",
  ): void {
    if (this.deps.llmConfigured !== false) return;
    throw new ValidationError(
      "llm_not_configured",
      `no LLM is configured, and ${need}: set OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama at http://127.0.0.1:11434/v1, with OPENAI_API_KEY if it needs one) or OPENAI_API_KEY alone (OpenAI), and LLM_MODEL, then restart (on AWS: npx sst secret set OpenaiApiKey, OpenaiBaseUrl or LlmProvider bedrock, then deploy); or ${instead}`,
    );
  }

  /** Refuses a webhook URL that delivery would refuse (`webhook-target.ts`), before anything is stored. */
  async checkWebhookUrl(url: string): Promise<void> {
    await this.deps.checkWebhookUrl(url);
  }

  /**
   * For another run of a task (a retry or a fork): its budget, lowered to what
   * the month has left; `RateLimitedError` (`monthly_budget_exhausted`, 429) when
   * the month's budget is spent, as for a new task.
   */
  async admitRun(tenant: string, budget: Budget): Promise<Budget> {
    const left = this.deps.admission ? await this.deps.admission.budgetLeft(tenant) : {};
    return capBudget(budget, left);
  }

  /**
   * Claims the task's running slot for a retry; false when all are taken (the
   * retry's branch is then written `queued` and waits with {@link waitForSlot}).
   */
  claimSlot(tenant: string, taskId: string): Promise<boolean> {
    return this.deps.admission ? this.deps.admission.claim(tenant, taskId) : Promise.resolve(true);
  }

  /** Lists the task's `queued` branch as waiting for a slot, since `since`. */
  async waitForSlot(tenant: string, taskId: string, since: string, branch: string): Promise<void> {
    await this.deps.admission?.wait(tenant, taskId, since, branch);
  }

  /**
   * Counts a branch's usage for the month before it is deleted: one that had not
   * ended (whose end would have counted it) spent tokens all the same.
   */
  async countUsage(tenant: string, taskId: string, branch: string): Promise<void> {
    await this.deps.admission?.countUsage?.(tenant, taskId, branch);
  }

  /** Frees the task's slot (a retry undone). */
  async releaseSlot(tenant: string, taskId: string): Promise<void> {
    await this.deps.admission?.release(tenant, taskId);
  }

  /** The branch's inputs as they are stored: large ones in the blob store. */
  private spillInputs(branch: BranchRecord): Promise<Record<string, unknown>> {
    const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
    return spillRecord(branch.config.inputs, this.deps.blobs, prefix);
  }

  /**
   * Finishes a start that was interrupted after the task was written: writes its
   * `main` branch if missing (from `fresh`, the same start made again), and
   * enqueues a first step that may have been lost (a duplicate costs the worker
   * one read), or lists the task as waiting. A task that ended is left as it is.
   */
  private async resume(task: TaskRecord, fresh: BranchRecord): Promise<TaskRecord> {
    const { tenant_id: tenant, task_id: taskId } = task;
    if (TERMINAL_STATUSES.has(task.status)) return task;
    const main = await this.deps.store.getBranch(tenant, taskId, "main");
    if (main) {
      if (main.status === "running" && main.head === null) await enqueueNext(this.deps, main, null);
      if (main.status === "queued")
        await this.deps.admission?.wait(tenant, taskId, task.created_at);
      return task;
    }
    fresh.config.inputs = await this.spillInputs(fresh);
    const admitted = this.deps.admission ? await this.deps.admission.claim(tenant, taskId) : true;
    const now = new Date(this.deps.clock.now()).toISOString();
    if (admitted) markRunning(fresh, now);
    await this.deps.store.createBranch(fresh).catch((error: unknown) => {
      if (!isErrorKind(error, "conflict")) throw error;
    });
    if (admitted) await enqueueNext(this.deps, fresh, null);
    else await this.deps.admission?.wait(tenant, taskId, task.created_at);
    return task;
  }

  /**
   * Undoes a start that failed or was cut short before its task was written:
   * deletes what it wrote (a branch, blobs), frees its slot, and removes its
   * marker last, so that a failure here leaves the marker for the sweep.
   */
  private async undoStart(tenant: string, taskId: string): Promise<void> {
    await this.deps.store.items.deleteMany(await this.deps.store.listTaskItemKeys(tenant, taskId));
    await this.deps.blobs.deletePrefix(taskBlobPrefix(tenant, taskId));
    await this.deps.admission?.release(tenant, taskId);
    await clearStart(this.deps.store.items, tenant, taskId);
  }

  /**
   * The sweep's repair of a start that did not complete (`task-starts.ts`): with
   * no task, what it wrote goes; with a task but no branch, the task fails with a
   * message saying so; with both, the start is finished (enqueued or waiting).
   */
  async repairStart(tenant: string, taskId: string): Promise<"removed" | "failed" | "finished"> {
    const task = await this.deps.store.getTask(tenant, taskId);
    if (!task) {
      await this.undoStart(tenant, taskId);
      return "removed";
    }
    const main = await this.deps.store.getBranch(tenant, taskId, "main");
    if (!main) {
      await failUnstarted(this.deps.store, this.deps.clock, tenant, taskId);
      await this.deps.admission?.release(tenant, taskId);
    } else if (main.status === "running" && main.head === null) {
      await enqueueNext(this.deps, main, null);
    } else if (main.status === "queued") {
      await this.deps.admission?.wait(tenant, taskId, task.created_at);
    }
    await clearStart(this.deps.store.items, tenant, taskId);
    return main ? "finished" : "failed";
  }

  /** Records the key for this task, or answers the task that already holds it. */
  private async claimIdempotencyKey(
    tenant: string,
    key: string,
    input: CreateTaskInput,
    taskId: string,
  ): Promise<string> {
    const now = this.deps.clock.now();
    const itemKey = idempotencyKey(tenant, key);
    const bodyHash = digest(stableJson(input));
    try {
      await this.deps.store.items.put(
        { ...itemKey, task_id: taskId, body_hash: bodyHash, ttl: Math.floor(now / 1000) + 86_400 },
        { exists: false, orExpiredBefore: Math.floor(now / 1000) },
      );
      return taskId;
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      const held = await this.deps.store.items.get(itemKey);
      if (!held) throw error;
      if (held.body_hash !== bodyHash) {
        throw new ConflictError(
          `the Idempotency-Key '${key}' was used with a different body within 24 hours: use a new key for a new task`,
          "idempotency_key_reused",
        );
      }
      return held.task_id as string;
    }
  }

  /**
   * The bytes of a blob one of the task's steps stored (a tool's image, a sandbox's
   * file: `{"$ref": "s3", "sha256": …}` in its value); 404 for a missing task, also
   * another tenant's, and for a blob the task does not hold.
   */
  async blob(tenant: string, taskId: string, sha256: string): Promise<Uint8Array> {
    await this.record(tenant, taskId);
    const bytes = await this.deps.blobs.get(taskBlobPrefix(tenant, taskId), sha256);
    if (!bytes) {
      throw new NotFoundError(`blob of task '${taskId}'`, sha256);
    }
    return bytes;
  }

  async get(tenant: string, taskId: string): Promise<Task> {
    // Both reads at once: a missing task answers 404 whatever the branch query found.
    const [task, branches] = await Promise.all([
      this.record(tenant, taskId),
      this.deps.store.listBranches(tenant, taskId),
    ]);
    return this.present(task, branches);
  }

  /**
   * The task as clients see it, from a record already read (by `record`, or
   * answered by an update): its branches are read, the task is not read again.
   */
  async view(task: TaskRecord): Promise<Task> {
    return this.present(task, await this.deps.store.listBranches(task.tenant_id, task.task_id));
  }

  private async present(task: TaskRecord, branches: BranchRecord[]): Promise<Task> {
    const view = await this.withSlotWait(await this.deps.presenter.task(task, branches), task);
    if (!task.webhook_url || !this.deps.deliveries) return view;
    const deliveries = await this.deps.deliveries(task.tenant_id, task.task_id);
    return { ...view, webhook: { url: task.webhook_url, deliveries } };
  }

  /** A `queued` task's place in line for a running slot (`waiting_for_slot`); one query, only then. */
  async withSlotWait(view: Task, task: TaskRecord): Promise<Task> {
    if (view.status !== "queued" || !this.deps.admission?.position) return view;
    const wait = await this.deps.admission.position(task.tenant_id, task.task_id);
    return wait ? { ...view, waiting_for_slot: wait } : view;
  }

  async record(tenant: string, taskId: string): Promise<TaskRecord> {
    const task = await this.deps.store.getTask(tenant, taskId);
    if (!task) throw new NotFoundError("task", taskId);
    return task;
  }

  async list(
    tenant: string,
    options: { status?: Status; limit: number; cursor?: string | null },
  ): Promise<{ tasks: Task[]; next_cursor: string | null }> {
    const page = await this.deps.store.listTasks(tenant, options);
    const tasks = await Promise.all(
      page.items.map(async (task) =>
        this.deps.presenter.task(task, await this.deps.store.listBranches(tenant, task.task_id)),
      ),
    );
    // Rows queued for a running slot say their place in line: one read of the
    // tenant's line for the whole page, and only when a row is queued.
    if (!tasks.some((t) => t.status === "queued") || !this.deps.admission?.positions) {
      return { tasks, next_cursor: page.cursor };
    }
    const line = await this.deps.admission.positions(tenant);
    const rows = tasks.map((t) => {
      const wait = t.status === "queued" ? line.get(t.task_id) : undefined;
      return wait ? { ...t, waiting_for_slot: wait } : t;
    });
    return { tasks: rows, next_cursor: page.cursor };
  }

  /** Asks every branch that is not finished to stop at its next step boundary. */
  async cancel(tenant: string, taskId: string): Promise<Task> {
    await this.record(tenant, taskId);
    const branches = await this.deps.store.listBranches(tenant, taskId);
    const now = new Date(this.deps.clock.now()).toISOString();
    for (const b of branches) {
      if (TERMINAL_STATUSES.has(b.status)) continue;
      const updated = await this.deps.store.updateBranch(tenant, taskId, b.name, {
        set: [
          [["cancel_requested"], true],
          [["updated_at"], now],
        ],
      });
      // A waiting branch has no step coming (`vm/wait.ts`), nor has one whose parallel
      // group runs until its members end (`vm/group.ts`): send one, which commits the cancel.
      if (updated.status === "waiting" || updated.group)
        await enqueueNext(this.deps, updated, updated.head, "cancel");
    }
    return this.get(tenant, taskId);
  }

  /** Deletes the task, its branches, commits, blobs and LLM traces. */
  async delete(tenant: string, taskId: string): Promise<void> {
    await this.record(tenant, taskId);
    const branches = await this.deps.store.listBranches(tenant, taskId);
    // Stop running branches first, so that no step writes into a half-deleted task;
    // what they spent counts for the month all the same.
    for (const b of branches) {
      await this.countUsage(tenant, taskId, b.name);
      await this.deps.store.items.delete(branchKey(tenant, taskId, b.name)).catch(() => undefined);
    }
    await this.deps.store.items.deleteMany(await this.deps.store.listTaskItemKeys(tenant, taskId));
    await this.deps.blobs.deletePrefix(taskBlobPrefix(tenant, taskId));
    await this.deps.blobs.deletePrefix(llmTracePrefix(tenant, taskId));
    // A step that was in flight may have written one more commit: sweep again.
    await this.deps.store.items.deleteMany(await this.deps.store.listTaskItemKeys(tenant, taskId));
  }
}

/** The task's budget, lowered to what the tenant's month has left. */
function capBudget(budget: Budget, left: { tokens?: number; costUsd?: number }): Budget {
  const capped = { ...budget };
  if (left.tokens !== undefined)
    capped.max_tokens = Math.min(budget.max_tokens ?? left.tokens, left.tokens);
  if (left.costUsd !== undefined) {
    capped.max_cost_usd = Math.min(budget.max_cost_usd ?? left.costUsd, left.costUsd);
  }
  return capped;
}

/** Sets a new branch `running`, listed in the sweep index. */
export function markRunning(branch: BranchRecord, now: string): void {
  branch.status = "running";
  for (const [[name], value] of sweepIndex(branch, now)) {
    (branch as unknown as Record<string, unknown>)[name!] = value;
  }
}

/** A new task record, `queued`, with `main` as its result branch. */
function newTask(
  tenant: string,
  taskId: string,
  input: CreateTaskInput,
  responseFormat: TaskRecord["response_format"],
  now: string,
): TaskRecord {
  return {
    ...taskKey(tenant, taskId),
    sk: "TASK",
    gsi1pk: tasksIndexPk(tenant),
    gsi1sk: `${now}#${taskId}`,
    tenant_id: tenant,
    task_id: taskId,
    goal: input.goal ?? null,
    name: input.name ?? null,
    title: taskTitle(input, taskId),
    namespace: input.namespace,
    status: "queued",
    branch: "main",
    final_answer: null,
    error: null,
    response_format: responseFormat,
    metadata: input.metadata,
    webhook_url: input.webhook_url ?? null,
    evaluate: input.evaluate,
    deleted_usage: ZERO_USAGE,
    created_at: now,
    updated_at: now,
  };
}

/** A new branch record with no commits. */
export function newBranch(
  tenant: string,
  taskId: string,
  name: string,
  config: BranchConfig,
  now: string,
): BranchRecord {
  return {
    pk: taskPk(tenant, taskId),
    sk: `B#${name}`,
    tenant_id: tenant,
    task_id: taskId,
    name,
    bid: newBranchId(),
    status: "queued",
    head: null,
    prev_head: null,
    depth: -1,
    pc: null,
    plan: null,
    plan_commit: null,
    vars: {},
    var_depth: {},
    chain: [],
    lineage: [],
    forked_from: null,
    final_answer: null,
    error: null,
    usage: { ...ZERO_USAGE },
    updates: 0,
    pending: null,
    cancel_requested: false,
    config,
    verdict: null,
    created_at: now,
    updated_at: now,
  };
}
