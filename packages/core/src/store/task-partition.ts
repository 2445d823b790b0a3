/**
 * What is done to a task's partition as a whole, or to the items the commit
 * protocol does not guard: deleting a task, an undone start, a branch or its
 * commits, and the markers of starts under way. `TaskStore` extends it, so that
 * a service asks the store for a deletion by what it is, never for its raw
 * items (the architecture test checks that no code outside `store/` does).
 */
import { isErrorKind } from "../errors";
import type { ItemKey, ItemStore } from "../ports/item-store";
import { branchKey, taskKey, taskPk } from "./keys";
import { queryArray } from "./query-all";
import type { CommitRecord, TaskRecord } from "./records";
import { clearStart, markStart, unfinishedStarts } from "./task-starts";

/** A task's partition: its deletions and its start markers. */
export class TaskPartition {
  constructor(
    /** The raw port: only the stores in `store/` use it. */
    readonly items: ItemStore,
  ) {}

  /** Every item of a task's partition (for deletion). */
  async listTaskItemKeys(
    tenant: string,
    taskId: string,
  ): Promise<Array<{ pk: string; sk: string }>> {
    const items = await queryArray(this.items, { pk: taskPk(tenant, taskId), limit: 500 });
    return items.map((item) => ({ pk: item.pk, sk: item.sk }));
  }

  /**
   * Deletes the task's record only if it is still as read (its `updated_at` and
   * status): false when a fork or a retry changed it since, so that a retention
   * sweep never deletes a task that came back to life.
   */
  async deleteTaskIfUnchanged(task: TaskRecord): Promise<boolean> {
    const condition = { equals: { updated_at: task.updated_at, status: task.status } };
    return this.items.delete(taskKey(task.tenant_id, task.task_id), condition).then(
      () => true,
      (error: unknown) => {
        if (isErrorKind(error, "conflict")) return false;
        throw error;
      },
    );
  }

  /** Deletes the task's record (the last item a deletion removes). */
  async deleteTaskRecord(tenant: string, taskId: string): Promise<void> {
    await this.items.delete(taskKey(tenant, taskId));
  }

  /**
   * Deletes every item of the task's partition (branches, commits, markers, the
   * record) but those `keep` holds on to: what a task's deletion and an undone
   * start remove.
   */
  async deleteTaskItems(
    tenant: string,
    taskId: string,
    keep: (key: ItemKey) => boolean = () => false,
  ): Promise<void> {
    const keys = await this.listTaskItemKeys(tenant, taskId);
    await this.items.deleteMany(keys.filter((key) => !keep(key)));
  }

  /**
   * Deletes a branch item, if given only while its head is still `head`: the
   * undo of a fork or a retry whose first step could not be queued leaves a
   * branch that a step moved since.
   */
  async deleteBranch(
    tenant: string,
    taskId: string,
    name: string,
    head?: string | null,
  ): Promise<void> {
    const key = branchKey(tenant, taskId, name);
    await (head === undefined
      ? this.items.delete(key)
      : this.items.delete(key, { equals: { head } }));
  }

  /** Deletes the given commits (a deleted branch's own, that no other branch reaches). */
  async deleteCommits(commits: readonly CommitRecord[]): Promise<void> {
    await this.items.deleteMany(commits.map((c) => ({ pk: c.pk, sk: c.sk })));
  }

  /** Records that a start of the task is under way (`store/task-starts.ts`). */
  async markStart(tenant: string, taskId: string, now: string): Promise<void> {
    await markStart(this.items, tenant, taskId, now);
  }

  /** The start is complete, or undone: its marker goes. */
  async clearStart(tenant: string, taskId: string): Promise<void> {
    await clearStart(this.items, tenant, taskId);
  }

  /** The starts begun before `before` (ISO time) that never completed (the sweep repairs them). */
  unfinishedStarts(before: string): AsyncGenerator<{ tenant: string; taskId: string }> {
    return unfinishedStarts(this.items, before);
  }
}
