/**
 * The repository of tasks, branches and commits over the `ItemStore` port. It owns
 * the conditions that make the commit protocol safe:
 *
 * - `putCommit`: `exists: false` on the key derived from (task, branch, parent),
 *   so two workers racing the same step leave exactly one commit.
 * - `advanceBranch`: `equals: { head: expected }`, so the head moves once per
 *   commit and never backwards.
 */
import { ConflictError, isErrorKind } from "../errors";
import type { Status } from "../model";
import type { Changes, Condition, ItemStore } from "../ports/item-store";
import { branchKey, commitKey, commitSk, taskKey, taskPk, tasksIndexPk } from "./keys";
import type { BranchRecord, CommitRecord, TaskRecord } from "./records";

export interface Page<T> {
  items: T[];
  cursor: string | null;
}

export class TaskStore {
  constructor(readonly items: ItemStore) {}

  /** Writes a new task and its first branch; the task id must be new. */
  async createTask(task: TaskRecord, branch: BranchRecord): Promise<void> {
    await this.items.put({ ...task }, { exists: false });
    await this.items.put({ ...branch }, { exists: false });
  }

  async getTask(tenant: string, taskId: string): Promise<TaskRecord | null> {
    return (await this.items.get(taskKey(tenant, taskId))) as unknown as TaskRecord | null;
  }

  async listTasks(
    tenant: string,
    options: { status?: Status; limit: number; cursor?: string | null },
  ): Promise<Page<TaskRecord>> {
    const page = await this.items.query({
      pk: tasksIndexPk(tenant),
      index: "gsi1",
      descending: true,
      limit: options.limit,
      cursor: options.cursor ?? null,
      ...(options.status ? { filter: { status: options.status } } : {}),
    });
    return { items: page.items as unknown as TaskRecord[], cursor: page.cursor };
  }

  async updateTask(
    tenant: string,
    taskId: string,
    set: Partial<TaskRecord>,
    condition: Condition = { exists: true },
  ): Promise<TaskRecord> {
    const changes: Changes = { set: Object.entries(set).map(([k, v]) => [[k], v]) };
    return (await this.items.update(
      taskKey(tenant, taskId),
      changes,
      condition,
    )) as unknown as TaskRecord;
  }

  async getBranch(tenant: string, taskId: string, name: string): Promise<BranchRecord | null> {
    return (await this.items.get(
      branchKey(tenant, taskId, name),
    )) as unknown as BranchRecord | null;
  }

  async listBranches(tenant: string, taskId: string): Promise<BranchRecord[]> {
    const branches: BranchRecord[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.items.query({ pk: taskPk(tenant, taskId), prefix: "B#", cursor });
      branches.push(...(page.items as unknown as BranchRecord[]));
      cursor = page.cursor;
    } while (cursor);
    return branches;
  }

  /** Creates a branch; a taken name is a `ConflictError` (`branch_exists`). */
  async createBranch(branch: BranchRecord): Promise<void> {
    try {
      await this.items.put({ ...branch }, { exists: false });
    } catch (error) {
      if (isErrorKind(error, "conflict")) {
        throw new ConflictError(`branch '${branch.name}' already exists`, "branch_exists", error);
      }
      throw error;
    }
  }

  /** Applies changes to a branch if its head is still `expectedHead`. */
  async advanceBranch(
    tenant: string,
    taskId: string,
    name: string,
    expectedHead: string | null,
    changes: Changes,
  ): Promise<BranchRecord> {
    return (await this.items.update(branchKey(tenant, taskId, name), changes, {
      exists: true,
      equals: { head: expectedHead },
    })) as unknown as BranchRecord;
  }

  /** Updates a branch unconditionally (but it must exist). */
  async updateBranch(
    tenant: string,
    taskId: string,
    name: string,
    changes: Changes,
    condition: Condition = { exists: true },
  ): Promise<BranchRecord> {
    return (await this.items.update(
      branchKey(tenant, taskId, name),
      changes,
      condition,
    )) as unknown as BranchRecord;
  }

  /** Writes a commit once: a second write of the same (task, branch, parent) is a `ConflictError`. */
  async putCommit(commit: CommitRecord): Promise<void> {
    await this.items.put({ ...commit }, { exists: false });
  }

  async getCommit(tenant: string, taskId: string, id: string): Promise<CommitRecord | null> {
    const key = commitKey(tenant, taskId, id);
    return key ? ((await this.items.get(key)) as unknown as CommitRecord | null) : null;
  }

  /** Reads many commits in one batch (up to 100), in no particular order. */
  async getCommits(tenant: string, taskId: string, ids: string[]): Promise<CommitRecord[]> {
    const keys = [...new Set(ids)].flatMap((id) => {
      const key = commitKey(tenant, taskId, id);
      return key ? [key] : [];
    });
    if (keys.length === 0) return [];
    return (await this.items.batchGet(keys)) as unknown as CommitRecord[];
  }

  /** One branch's own commits up to a depth, newest first. */
  async listOwnCommits(
    tenant: string,
    taskId: string,
    bid: string,
    upto: number,
    limit: number,
    cursor: string | null,
  ): Promise<Page<CommitRecord>> {
    const page = await this.items.query({
      pk: taskPk(tenant, taskId),
      between: [commitSk(bid, 0), commitSk(bid, upto)],
      descending: true,
      limit,
      cursor,
    });
    return { items: page.items as unknown as CommitRecord[], cursor: page.cursor };
  }

  /** Every item of a task's partition (for deletion). */
  async listTaskItemKeys(
    tenant: string,
    taskId: string,
  ): Promise<Array<{ pk: string; sk: string }>> {
    const keys: Array<{ pk: string; sk: string }> = [];
    let cursor: string | null = null;
    do {
      const page = await this.items.query({ pk: taskPk(tenant, taskId), cursor, limit: 500 });
      keys.push(...page.items.map((item) => ({ pk: item.pk, sk: item.sk })));
      cursor = page.cursor;
    } while (cursor);
    return keys;
  }
}
