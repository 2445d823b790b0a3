/**
 * Reading tasks as clients see them: one task (its record, its view with its
 * branches, its place in line for a slot, its webhook deliveries), a page of
 * tasks, a blob one of its steps stored. Every read of another tenant's task
 * answers 404, as for a missing one.
 */
import { NotFoundError } from "../errors";
import type { Status, Task, TaskWebhook } from "../model";
import type { Blobs } from "../ports/blobs";
import type { BranchRecord, TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { taskBlobPrefix } from "../store/values";
import type { Presenter } from "./present";
import type { RunAdmission } from "./run-admission";

export interface TaskReadsDeps {
  store: TaskStore;
  blobs: Blobs;
  presenter: Presenter;
  /** Where a queued task stands in line for a running slot. */
  admission: RunAdmission;
  /** The outgoing webhook deliveries of a task, shown on it (`webhooks.ts`). */
  deliveries?: (tenant: string, taskId: string) => Promise<TaskWebhook["deliveries"]>;
}

/** The reads of tasks. */
export class TaskReads {
  constructor(private readonly deps: TaskReadsDeps) {}

  /** The task's record; 404 for a missing task, also another tenant's. */
  async record(tenant: string, taskId: string): Promise<TaskRecord> {
    const task = await this.deps.store.getTask(tenant, taskId);
    if (!task) throw new NotFoundError("task", taskId);
    return task;
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

  /** The task as clients see it (`GET /v1/tasks/{id}`). */
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
    if (view.status !== "queued") return view;
    const wait = await this.deps.admission.position(task.tenant_id, task.task_id);
    return wait ? { ...view, waiting_for_slot: wait } : view;
  }

  /** A page of the tenant's tasks, newest first (`GET /v1/tasks`). */
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
    if (!tasks.some((t) => t.status === "queued")) return { tasks, next_cursor: page.cursor };
    const line = await this.deps.admission.positions(tenant);
    if (!line) return { tasks, next_cursor: page.cursor };
    const rows = tasks.map((t) => {
      const wait = t.status === "queued" ? line.get(t.task_id) : undefined;
      return wait ? { ...t, waiting_for_slot: wait } : t;
    });
    return { tasks: rows, next_cursor: page.cursor };
  }
}
