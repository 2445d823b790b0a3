/**
 * The repository of tasks, branches and commits over the `ItemStore` port. It owns
 * the conditions that make the commit protocol safe:
 *
 * - `putCommit`: `exists: false` on the key derived from (task, branch, parent),
 *   so two workers racing the same step leave exactly one commit.
 * - `advanceBranch`: `equals: { head: expected }`, so the head moves once per
 *   commit and never backwards.
 *
 * A branch item does not hold its plan once the plan is committed: it names the
 * commit that set it (`plan_commit`), which holds the plan once per plan version
 * (a replan or a plan given to a fork is a new plan commit). A committed plan never
 * changes, so this store keeps it in memory by that commit, and every branch it
 * returns has its plan filled in (`#withPlan`). So a step's head move rewrites a
 * small item (DynamoDB bills an update by the whole item's size), and a step still
 * reads one item. Only a task created with a plan has it on its branch, until its
 * first commit (the plan commit) takes it off.
 *
 * Nor does it hold its variables, by value or by name: each value lives once, in
 * the outputs of the commit that set it, and the windows of the head and its
 * chain say where (`vm/variables.ts`). A commit never changes either, so what
 * the commits this store wrote or read say about variables is kept too, up to a
 * bound in bytes (`commitViews`): a worker finds the commits it wrote again
 * without a read.
 */
import { ConflictError, isErrorKind } from "../errors";
import type { Status } from "../model";
import type { Plan } from "../plan/schema";
import type { Changes, Condition, Item, ItemKey, ItemStore } from "../ports/item-store";
import { IdempotencyStore } from "./idempotency-store";
import { mergeUpdated, throwAsRefusal } from "./item-rules";
import {
  BRANCH_PREFIX,
  branchKey,
  commitKey,
  commitRange,
  commitSk,
  taskKey,
  taskPk,
  tasksIndexPk,
} from "./keys";
import { queryArray } from "./query-all";
import type { BranchRecord, CommitRecord, TaskRecord } from "./records";
import { TaskPartition } from "./task-partition";

export interface Page<T> {
  items: T[];
  cursor: string | null;
}

/** How many plans a store keeps (a plan is at most a few hundred kB; most are a few kB). */
const PLANS_KEPT = 256;

/**
 * What a commit says about variables: the values it set (`outputs`), and its
 * window (`vm/fenwick.ts`): where each variable set in its range lives
 * (`window_ids`), or, written before issue 22, their values (`window`).
 */
export type CommitView = Pick<
  CommitRecord,
  "commit_id" | "depth" | "outputs" | "window" | "window_ids"
>;

/**
 * The attributes of a commit that place it in history and say where its state
 * stands: everything the state at a commit needs but the values (`CommitView`).
 * Small whatever the commit holds, so reading them costs the emulator and the
 * SDK little (DynamoDB still bills the whole item).
 */
const HEAD_ATTRIBUTES = [
  "commit_id",
  "parent_id",
  "branch",
  "bid",
  "depth",
  "chain",
  "plan_commit",
  "pc_after",
  "status_after",
] as const;

/** A commit's place in history (`HEAD_ATTRIBUTES`), without its values or its step's record. */
export type CommitHead = Pick<CommitRecord, (typeof HEAD_ATTRIBUTES)[number]>;

/** How many bytes of commit views (as JSON) a store keeps: 64 MB. */
const OUTPUTS_KEPT_BYTES = 64 * 1024 * 1024;

export class TaskStore extends TaskPartition {
  /** Committed plans by task partition and commit id, oldest first (they never change). */
  readonly #plans = new Map<string, Plan>();
  /** Commit views by task partition and commit id, least recently used first. */
  readonly #views = new Map<string, { view: CommitView; bytes: number }>();
  #viewBytes = 0;

  /** Idempotency keys of task starts and retries, in the tenant's partition. */
  readonly idempotency: IdempotencyStore;
  constructor(items: ItemStore) {
    super(items);
    this.idempotency = new IdempotencyStore(items);
  }

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
    const item = await this.items.get(branchKey(tenant, taskId, name));
    return item ? this.#withPlan(item as unknown as BranchRecord) : null;
  }

  /**
   * The branch with its plan: the item's own (a task created with a plan, before its
   * first commit), else the plan of `plan_commit`, kept here or read from that commit
   * once per plan and process.
   */
  async #withPlan(branch: BranchRecord): Promise<BranchRecord> {
    if (branch.plan) return branch;
    branch.plan = branch.plan_commit
      ? await this.planOf(branch.tenant_id, branch.task_id, branch.plan_commit)
      : null;
    return branch;
  }

  /** The plan set by a commit: kept here, or read from that commit (and kept). */
  async planOf(tenant: string, taskId: string, commitId: string): Promise<Plan | null> {
    const id = `${taskPk(tenant, taskId)}/${commitId}`;
    const kept = this.#plans.get(id);
    if (kept) return kept;
    const key = commitKey(tenant, taskId, commitId);
    const commit = key ? await this.items.get(key, { attributes: ["plan"] }) : null;
    const plan = (commit?.plan as Plan | undefined) ?? null;
    if (plan) this.#keepPlan(id, plan);
    return plan;
  }

  #keepPlan(id: string, plan: Plan): void {
    this.#plans.delete(id);
    this.#plans.set(id, plan);
    if (this.#plans.size > PLANS_KEPT) this.#plans.delete(this.#plans.keys().next().value!);
  }

  async listBranches(tenant: string, taskId: string): Promise<BranchRecord[]> {
    const pk = taskPk(tenant, taskId);
    return (await queryArray(this.items, {
      pk,
      prefix: BRANCH_PREFIX,
    })) as unknown as BranchRecord[];
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

  /**
   * Applies changes to a branch if its head is still `expectedHead`. Given the branch
   * as read (`before`), only what changed comes back and is merged into it
   * (`mergeUpdated`), instead of the whole item with its variables.
   */
  async advanceBranch(
    tenant: string,
    taskId: string,
    name: string,
    expectedHead: string | null,
    changes: Changes,
    before?: BranchRecord,
  ): Promise<BranchRecord> {
    const condition = { exists: true, equals: { head: expectedHead } };
    const key = branchKey(tenant, taskId, name);
    if (!before) {
      const after = await this.items.update(key, changes, condition);
      return this.#withPlan(after as unknown as BranchRecord);
    }
    const answer = await this.items.update(key, changes, condition, { returns: "updated" });
    const moved = mergeUpdated(
      before as unknown as Item,
      changes,
      answer,
    ) as unknown as BranchRecord;
    if (moved.plan_commit !== before.plan_commit) moved.plan = null;
    return this.#withPlan(moved);
  }

  /** Updates a branch unconditionally (but it must exist). */
  async updateBranch(
    tenant: string,
    taskId: string,
    name: string,
    changes: Changes,
    condition: Condition = { exists: true },
  ): Promise<BranchRecord> {
    const after = await this.items.update(branchKey(tenant, taskId, name), changes, condition);
    return this.#withPlan(after as unknown as BranchRecord);
  }

  /** Writes a commit once (again: `ConflictError`); a value it cannot hold: `StoreRefusedError`. */
  async putCommit(commit: CommitRecord): Promise<void> {
    await this.items.put({ ...commit }, { exists: false }).catch(throwAsRefusal);
    if (commit.plan) this.#keepPlan(`${commit.pk}/${commit.commit_id}`, commit.plan);
    this.#keepView(commit);
  }

  async getCommit(tenant: string, taskId: string, id: string): Promise<CommitRecord | null> {
    const key = commitKey(tenant, taskId, id);
    const commit = key ? ((await this.items.get(key)) as unknown as CommitRecord | null) : null;
    if (commit) this.#keepView(commit);
    return commit;
  }

  /**
   * A commit's place in history (`CommitHead`), or null when it does not exist.
   * Read from the store each time, so that a deleted commit is not found; its
   * values come from `commitViews`, which keeps them (a commit never changes).
   */
  async getCommitHead(tenant: string, taskId: string, id: string): Promise<CommitHead | null> {
    const key = commitKey(tenant, taskId, id);
    if (!key) return null;
    const item = await this.items.get(key, { attributes: [...HEAD_ATTRIBUTES] });
    if (!item) return null;
    const head = item as unknown as CommitHead;
    return { ...head, chain: head.chain ?? [], plan_commit: head.plan_commit ?? null };
  }

  /**
   * What the named commits say about variables (`CommitView`), by id: kept ones
   * from memory, the rest in one batch read. A commit that does not exist is
   * absent from the answer.
   */
  async commitViews(
    tenant: string,
    taskId: string,
    ids: Iterable<string>,
  ): Promise<Map<string, CommitView>> {
    const pk = taskPk(tenant, taskId);
    const found = new Map<string, CommitView>();
    const missing: ItemKey[] = [];
    for (const id of new Set(ids)) {
      const kept = this.#views.get(`${pk}/${id}`);
      if (kept) {
        // Most recently used last.
        this.#views.delete(`${pk}/${id}`);
        this.#views.set(`${pk}/${id}`, kept);
        found.set(id, kept.view);
        continue;
      }
      const key = commitKey(tenant, taskId, id);
      if (key) missing.push(key);
    }
    if (missing.length > 0) {
      const items = await this.items.batchGet(missing);
      for (const item of items as unknown as CommitRecord[]) {
        found.set(item.commit_id, this.#keepView(item));
        if (item.plan) this.#keepPlan(`${pk}/${item.commit_id}`, item.plan);
      }
    }
    return found;
  }

  /**
   * The views of the named commits and the plan set by `planCommit`, in one
   * batch read of those not kept: the state at a commit needs both.
   */
  async viewsAndPlan(
    tenant: string,
    taskId: string,
    ids: Iterable<string>,
    planCommit: string | null,
  ): Promise<{ views: Map<string, CommitView>; plan: Plan | null }> {
    const planId = planCommit ? `${taskPk(tenant, taskId)}/${planCommit}` : null;
    const planKept = planId !== null && this.#plans.has(planId);
    const views = await this.commitViews(
      tenant,
      taskId,
      planCommit && !planKept ? [...ids, planCommit] : ids,
    );
    // A plan commit whose view was kept but whose plan was not is read once more.
    const plan = planCommit
      ? (this.#plans.get(planId!) ?? (await this.planOf(tenant, taskId, planCommit)))
      : null;
    return { views, plan };
  }

  /** The outputs (as stored: large values as references) of the named commits, by id. */
  async outputsOf(
    tenant: string,
    taskId: string,
    ids: Iterable<string>,
  ): Promise<Map<string, Record<string, unknown>>> {
    const views = await this.commitViews(tenant, taskId, ids);
    return new Map([...views].map(([id, view]) => [id, view.outputs]));
  }

  #keepView(commit: CommitRecord): CommitView {
    const id = `${commit.pk}/${commit.commit_id}`;
    const kept = this.#views.get(id);
    if (kept) return kept.view;
    const view: CommitView = {
      commit_id: commit.commit_id,
      depth: commit.depth,
      outputs: commit.outputs ?? {},
      ...(commit.window === undefined ? {} : { window: commit.window }),
      ...(commit.window_ids === undefined ? {} : { window_ids: commit.window_ids }),
    };
    const bytes =
      JSON.stringify(view.outputs).length +
      (view.window ? JSON.stringify(view.window).length : 0) +
      (view.window_ids ? JSON.stringify(view.window_ids).length : 0) +
      id.length;
    if (bytes > OUTPUTS_KEPT_BYTES / 16) return view;
    this.#views.set(id, { view, bytes });
    this.#viewBytes += bytes;
    for (const [oldest, old] of this.#views) {
      if (this.#viewBytes <= OUTPUTS_KEPT_BYTES) break;
      this.#views.delete(oldest);
      this.#viewBytes -= old.bytes;
    }
    return view;
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

  /** One branch's own commits with depths in `[from, upto]`, oldest first. */
  async listCommitsBetween(
    tenant: string,
    taskId: string,
    bid: string,
    from: number,
    upto: number,
  ): Promise<CommitRecord[]> {
    const between = commitRange(bid, from, upto);
    const pk = taskPk(tenant, taskId);
    return (await queryArray(this.items, { pk, between })) as unknown as CommitRecord[];
  }
}
