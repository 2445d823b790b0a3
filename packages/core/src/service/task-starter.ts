/**
 * The start protocol of a task: the checks, the records written all or nothing,
 * the first step enqueued (or the task listed as waiting for a slot), the same
 * start made again (an idempotency key, a trigger delivery or a schedule run
 * retried), and the sweep's repair of a start a crash cut short.
 */
import { ConflictError, isErrorKind, NotFoundError } from "../errors";
import { isFileReference } from "../files/file-inputs";
import type { FileRecord } from "../files/records";
import { digest, newTaskId } from "../ids";
import { TERMINAL_STATUSES } from "../model-values";
import type { PlanProblem } from "../plan/problems";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import { idempotencyKey } from "../store/keys";
import type {
  BranchConfig,
  BranchRecord,
  TaskRecord,
  TaskThread,
  ThreadHistory,
} from "../store/records";
import type { TaskStore } from "../store/task-store";
import { spilledForm, spillRecord, taskBlobPrefix } from "../store/values";
import { checkAnswerSchema } from "../vm/answer-schema";
import { enqueueNext } from "../vm/enqueue";
import { normalizeFormat, parseTrailingFormat } from "../vm/goal-text";
import { claimIdempotencyKey } from "./idempotency-keys";
import type { NamespaceService, ResolvedNamespace } from "./namespaces";
import type { PlanChecks } from "./plan-checks";
import type { RunAdmission } from "./run-admission";
import { stableJson } from "./stable-json";
import type { CreateTaskInput } from "./task-input";
import { markRunning, newBranch, newTask } from "./task-records";
import { checkRecordFits, checkTaskFields } from "./task-sizes";
import { failUnstarted } from "./task-starts";

export interface TaskStarterDeps {
  store: TaskStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  namespaces: Pick<NamespaceService, "resolve">;
  checks: PlanChecks;
  admission: RunAdmission;
  /** A tenant's ready file (`FileService.ready`), for `{"$file": id}` inputs; none: every such input is not found. */
  readyFile?: (tenant: string, fileId: string) => Promise<FileRecord>;
}

/** A task started (or the same start again), with the warnings of its plan. */
export interface StartedTask {
  task: TaskRecord;
  replayed: boolean;
  /** The plan validator's warnings (none for a goal): the same as POST /v1/plans/validate answers. */
  warnings: PlanProblem[];
}

/** How {@link TaskStarter.startOnce} holds a request's key. */
export interface StartOnceOptions {
  /** How long the key answers the same run. */
  seconds: number;
  /**
   * Whether a request sent again answers the held task: `answered` says the
   * request that started it was answered (`markAnswered`).
   */
  reuse: (task: TaskRecord, answered: boolean) => boolean;
}

/** Starts tasks, and repairs the starts a crash cut short. */
export class TaskStarter {
  constructor(private readonly deps: TaskStarterDeps) {}

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
   * Starts a task once per `key` within `seconds` (the chat face's retried
   * request): while a claim holds the key, a start answers the claim's task
   * when `reuse` says so (`replayed`), and otherwise takes the key over and
   * starts a new task. `reuse` is told whether the claim's request was
   * answered ({@link markAnswered}). A start that is refused lets the key go,
   * so that a refusal leaves nothing behind.
   */
  async startOnce(
    tenant: string,
    input: CreateTaskInput,
    key: string,
    options: StartOnceOptions,
  ): Promise<StartedTask> {
    const { store, clock } = this.deps;
    const itemKey = idempotencyKey(tenant, key);
    const taskId = newTaskId();
    const fields = { task_id: taskId, body_hash: digest(stableJson(input)) };
    const now = Math.floor(clock.now() / 1000);
    let claimed = false;
    // Another round when the claim went, or another request took it over, between the write and the read.
    for (let round = 0; round < 3 && !claimed; round++) {
      const claim = await store.idempotency.claim(itemKey, fields, now, options.seconds);
      if (claim.claimed) {
        claimed = true;
        break;
      }
      if (!claim.held) continue;
      const heldId = String(claim.held.task_id);
      const held = await store.getTask(tenant, heldId);
      const answered = claim.held.answered === true;
      if (held && claim.held.body_hash === fields.body_hash && options.reuse(held, answered)) {
        return { task: held, replayed: true, warnings: [] };
      }
      claimed = await store.idempotency.takeOver(itemKey, heldId, fields, now, options.seconds);
    }
    if (!claimed) throw new ConflictError(`the same request is being started by another request`);
    try {
      return await this.create(tenant, input, taskId);
    } catch (error) {
      await store.idempotency.release(itemKey, taskId);
      throw error;
    }
  }

  /**
   * Notes that the request that started `taskId` through {@link startOnce}
   * with `key` was answered: a request sent again is then a new question
   * once that task has ended, where before it was a retry of a request whose
   * answer never arrived.
   */
  markAnswered(tenant: string, key: string, taskId: string): Promise<void> {
    return this.deps.store.idempotency.markAnswered(idempotencyKey(tenant, key), taskId);
  }

  /**
   * The task `key` holds now ({@link holdRun}), and whether the request that
   * started it was answered; null when no unexpired hold names a task that is there.
   */
  async heldRun(
    tenant: string,
    key: string,
  ): Promise<{ task: TaskRecord; answered: boolean } | null> {
    const item = await this.deps.store.idempotency.get(idempotencyKey(tenant, key));
    const now = Math.floor(this.deps.clock.now() / 1000);
    if (!item || (typeof item.ttl === "number" && item.ttl < now)) return null;
    const task = await this.deps.store.getTask(tenant, String(item.task_id));
    return task ? { task, answered: item.answered === true } : null;
  }

  /** Holds `key` for `taskId` for `seconds`: a thread's turn a chat request started elsewhere. */
  holdRun(tenant: string, key: string, taskId: string, seconds: number): Promise<void> {
    const now = Math.floor(this.deps.clock.now() / 1000);
    return this.deps.store.idempotency.hold(
      idempotencyKey(tenant, key),
      { task_id: taskId },
      now,
      seconds,
    );
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
    /** A turn of a thread (`service/threads.ts`): its link, and the turns its planner is shown. */
    thread?: { link: TaskThread; history: ThreadHistory },
  ): Promise<StartedTask> {
    const { checks, admission } = this.deps;
    let taskId = givenTaskId ?? newTaskId();
    // A file input is checked (the tenant's, ready) and described before anything else reads the inputs.
    if (Object.values(input.inputs).some(isFileReference)) {
      const ready = this.deps.readyFile;
      input = {
        ...input,
        // Read on first use: most tasks take no file.
        inputs: await (await import("../files/file-refs")).resolveInputFiles(input.inputs, (id) =>
          ready ? ready(tenant, id) : Promise.reject(new NotFoundError("file", id)),
        ),
      };
    }
    if (input.plan === undefined) checks.requireLlm();
    const namespace = await this.deps.namespaces.resolve(tenant, input.namespace);
    // The task's own plan_compat wins; the branch's copy of the namespace carries it to the VM.
    const withCompat: ResolvedNamespace = input.plan_compat
      ? { ...namespace, config: { ...namespace.config, plan_compat: input.plan_compat } }
      : namespace;
    // The task's own planning wins too (`adaptive`: a plan that grows after each result).
    const resolved: ResolvedNamespace = input.planning
      ? { ...withCompat, config: { ...withCompat.config, planning: input.planning } }
      : withCompat;
    // An adaptive task's plan grows by the planner's calls, even when the client wrote its start.
    if (input.plan !== undefined && resolved.config.planning === "adaptive") checks.requireLlm();
    if (input.webhook_url) await checks.checkWebhookUrl(input.webhook_url);
    checkTaskFields(input);
    const parsed = input.goal ? parseTrailingFormat(input.goal) : null;
    const responseFormat = normalizeFormat(input.response_format ?? parsed?.format ?? {});
    await checkAnswerSchema(responseFormat);
    const checked =
      input.plan === undefined
        ? null
        : await checks.checkPlan(resolved, input.plan, Object.keys(input.inputs));
    const plan = checked?.plan ?? null;
    const warnings = checked?.warnings ?? [];
    const budget = await admission.admitRun(tenant, input.budget);
    const now = new Date(this.deps.clock.now()).toISOString();
    const records = (id: string) => {
      const task = newTask(tenant, id, input, responseFormat, now);
      if (thread) task.thread = thread.link;
      const config: BranchConfig = {
        goal: parsed?.goal ?? input.goal ?? null,
        namespace: resolved.config,
        // The task's own replan wins over its namespace's (namespace.replan in the copy above).
        ...(input.replan === undefined ? {} : { replan: input.replan }),
        response_format: responseFormat,
        budget: { ...budget },
        inputs: input.inputs,
        webhook_url: input.webhook_url ?? null,
        evaluate: input.evaluate,
        evaluation_round: 0,
        ...(thread ? { thread: thread.history } : {}),
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
      const first = await claimIdempotencyKey(this.deps, tenant, idempotencyKey, input, taskId);
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
    await this.deps.store.markStart(tenant, taskId, now);
    let written = true;
    try {
      branch.config.inputs = await this.spillInputs(branch);
      const admitted = await admission.claimSlot(tenant, taskId);
      if (admitted) markRunning(branch, now);
      written = await this.deps.store.createTask(task, branch).then(
        () => true,
        (error: unknown) => {
          if (isErrorKind(error, "conflict")) return false;
          throw error;
        },
      );
      if (written && admitted) await enqueueNext(this.deps, branch, null);
      else if (written) await admission.waitForSlot(tenant, taskId, now);
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
    await this.deps.store.clearStart(tenant, taskId);
    return { task, replayed, warnings };
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
      await this.deps.admission.releaseSlot(tenant, taskId);
    } else if (main.status === "running" && main.head === null) {
      await enqueueNext(this.deps, main, null);
    } else if (main.status === "queued") {
      await this.deps.admission.waitForSlot(tenant, taskId, task.created_at);
    }
    await this.deps.store.clearStart(tenant, taskId);
    return main ? "finished" : "failed";
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
    const { admission } = this.deps;
    if (TERMINAL_STATUSES.has(task.status)) return task;
    const main = await this.deps.store.getBranch(tenant, taskId, "main");
    if (main) {
      if (main.status === "running" && main.head === null) await enqueueNext(this.deps, main, null);
      if (main.status === "queued") await admission.waitForSlot(tenant, taskId, task.created_at);
      return task;
    }
    fresh.config.inputs = await this.spillInputs(fresh);
    const admitted = await admission.claimSlot(tenant, taskId);
    const now = new Date(this.deps.clock.now()).toISOString();
    if (admitted) markRunning(fresh, now);
    await this.deps.store.createBranch(fresh).catch((error: unknown) => {
      if (!isErrorKind(error, "conflict")) throw error;
    });
    if (admitted) await enqueueNext(this.deps, fresh, null);
    else await admission.waitForSlot(tenant, taskId, task.created_at);
    return task;
  }

  /**
   * Undoes a start that failed or was cut short before its task was written:
   * deletes what it wrote (a branch, blobs), frees its slot, and removes its
   * marker last, so that a failure here leaves the marker for the sweep.
   */
  private async undoStart(tenant: string, taskId: string): Promise<void> {
    await this.deps.store.deleteTaskItems(tenant, taskId);
    await this.deps.blobs.deletePrefix(taskBlobPrefix(tenant, taskId));
    await this.deps.admission.releaseSlot(tenant, taskId);
    await this.deps.store.clearStart(tenant, taskId);
  }
}
