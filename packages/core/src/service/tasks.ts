/**
 * The task service as the API, the sweep and the test systems hold it: one
 * object built from one set of dependencies, holding the pieces a task is made
 * of, each in its own file: the plan checks (`plan-checks.ts`), the quotas'
 * admission of runs (`run-admission.ts`), the start protocol (`task-starter.ts`),
 * the reads (`task-reads.ts`) and cancel and delete (`task-controls.ts`). Its
 * methods only pass on to them, so that the routes keep one `tasks` to call;
 * other services take the piece they need (`reads`, `checks`, `admission`,
 * `starter`), not this.
 */
import type { FileRecord } from "../files/records";
import type { Status, Task, TaskWebhook } from "../model";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import type { TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { Tool } from "../tools/tool";
import type { NamespaceService } from "./namespaces";
import { PlanChecks } from "./plan-checks";
import type { Presenter } from "./present";
import type { TaskAdmission } from "./quotas";
import { RunAdmission } from "./run-admission";
import { TaskControls } from "./task-controls";
import type { CreateTaskInput } from "./task-input";
import { TaskReads } from "./task-reads";
import { type StartedTask, type StartOnceOptions, TaskStarter } from "./task-starter";

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
  /** A tenant's file when it is ready (`FileService.ready`), for `{"$file": id}` inputs; none: such an input is not found. */
  readyFile?: (tenant: string, fileId: string) => Promise<FileRecord>;
}

/** Tasks: started, read, cancelled and deleted, through the pieces it holds. */
export class TaskService {
  /** The checks of a plan before it runs (forks, retries, triggers and schedules run them too). */
  readonly checks: PlanChecks;
  /** The quotas as a run meets them (a retry's and a fork's too). */
  readonly admission: RunAdmission;
  /** The start protocol (triggers and schedules start their tasks through it). */
  readonly starter: TaskStarter;
  /** The reads of tasks (other services read a task's record through them). */
  readonly reads: TaskReads;
  /** Cancel and delete. */
  readonly controls: TaskControls;

  constructor(deps: TaskServiceDeps) {
    this.checks = new PlanChecks(deps);
    this.admission = new RunAdmission(deps.admission);
    const { store, blobs, queue, clock, namespaces, presenter } = deps;
    const { checks, admission } = this;
    this.starter = new TaskStarter({
      store,
      blobs,
      queue,
      clock,
      namespaces,
      checks,
      admission,
      ...(deps.readyFile ? { readyFile: deps.readyFile } : {}),
    });
    const deliveries = deps.deliveries ? { deliveries: deps.deliveries } : {};
    this.reads = new TaskReads({ store, blobs, presenter, admission, ...deliveries });
    this.controls = new TaskControls({ store, blobs, queue, clock, admission, reads: this.reads });
  }

  /** False when no LLM is configured (a goal is then refused with 422 `llm_not_configured`). */
  get llmConfigured(): boolean {
    return this.checks.llmConfigured;
  }

  /** {@link TaskStarter.start}: `POST /v1/tasks`, once per idempotency key. */
  start(
    tenant: string,
    input: CreateTaskInput,
    idempotencyKey: string | null,
    taskId?: string,
  ): Promise<StartedTask> {
    return this.starter.start(tenant, input, idempotencyKey, taskId);
  }

  /** {@link TaskStarter.startOnce}: the chat face's start, once per request within a window. */
  startOnce(
    tenant: string,
    input: CreateTaskInput,
    key: string,
    options: StartOnceOptions,
  ): Promise<StartedTask> {
    return this.starter.startOnce(tenant, input, key, options);
  }

  /** {@link TaskStarter.markAnswered}: the request `startOnce` held under `key` was answered. */
  markAnswered(tenant: string, key: string, taskId: string): Promise<void> {
    return this.starter.markAnswered(tenant, key, taskId);
  }

  /** {@link TaskStarter.heldRun}: the task a request's key holds, and whether it was answered. */
  heldRun(tenant: string, key: string): Promise<{ task: TaskRecord; answered: boolean } | null> {
    return this.starter.heldRun(tenant, key);
  }

  /** {@link TaskStarter.holdRun}: holds a request's key for the task it started. */
  holdRun(tenant: string, key: string, taskId: string, seconds: number): Promise<void> {
    return this.starter.holdRun(tenant, key, taskId, seconds);
  }

  /** {@link TaskStarter.create}: starts a task, or finishes the same start made again. */
  create(
    tenant: string,
    input: CreateTaskInput,
    taskId?: string,
    idempotencyKey: string | null = null,
  ): Promise<StartedTask> {
    return this.starter.create(tenant, input, taskId, idempotencyKey);
  }

  /** {@link TaskStarter.repairStart}: the sweep's repair of a start cut short. */
  repairStart(tenant: string, taskId: string): Promise<"removed" | "failed" | "finished"> {
    return this.starter.repairStart(tenant, taskId);
  }

  /** {@link TaskReads.record}: the task's record; 404 for a missing task, also another tenant's. */
  record(tenant: string, taskId: string): Promise<TaskRecord> {
    return this.reads.record(tenant, taskId);
  }

  /** {@link TaskReads.get}: the task as clients see it. */
  get(tenant: string, taskId: string): Promise<Task> {
    return this.reads.get(tenant, taskId);
  }

  /** {@link TaskReads.view}: the task as clients see it, from a record already read. */
  view(task: TaskRecord): Promise<Task> {
    return this.reads.view(task);
  }

  /** {@link TaskReads.list}: a page of the tenant's tasks. */
  list(
    tenant: string,
    options: { status?: Status; limit: number; cursor?: string | null },
  ): Promise<{ tasks: Task[]; next_cursor: string | null }> {
    return this.reads.list(tenant, options);
  }

  /** {@link TaskReads.blob}: the bytes of a blob one of the task's steps stored. */
  blob(tenant: string, taskId: string, sha256: string): Promise<Uint8Array> {
    return this.reads.blob(tenant, taskId, sha256);
  }

  /** {@link TaskControls.cancel}: every branch not finished stops at its next step boundary. */
  cancel(tenant: string, taskId: string): Promise<Task> {
    return this.controls.cancel(tenant, taskId);
  }

  /** {@link TaskControls.delete}: the task and all it stored. */
  delete(tenant: string, taskId: string): Promise<void> {
    return this.controls.delete(tenant, taskId);
  }
}
