/**
 * The repository of tasks, branches and commits over the `ItemStore` port. It owns
 * the conditions that make the commit protocol safe:
 *
 * - `putCommit`: `exists: false` on the key derived from (task, branch, parent),
 *   so two workers racing the same step leave exactly one commit.
 * - `advanceBranch`: `equals: { head: expected }`, so the head moves once per
 *   commit and never backwards.
 *
 * A step reads its branch without the plan (`getBranchForStep`): a committed plan
 * never changes, so it is kept here by the commit that set it (`plan_commit`).
 */
import { ConflictError, isErrorKind } from "../errors";
import { mergeUpdated } from "../memory/item-rules";
import type { Status } from "../model";
import type { Plan } from "../plan/schema";
import type { Changes, Condition, Item, ItemStore } from "../ports/item-store";
import { branchKey, commitKey, commitSk, taskKey, taskPk, tasksIndexPk } from "./keys";
import type { BranchRecord, CommitRecord, TaskRecord } from "./records";

export interface Page<T> {
  items: T[];
  cursor: string | null;
}

/**
 * Every attribute of a branch item but its plan: what a step reads. A key of
 * `BranchRecord` missing here fails the type check below (`StepAttributesCover`).
 */
const STEP_ATTRIBUTES = [
  "gsi1pk",
  "gsi1sk",
  "tenant_id",
  "task_id",
  "name",
  "bid",
  "status",
  "head",
  "prev_head",
  "depth",
  "pc",
  "plan_commit",
  "vars",
  "var_depth",
  "chain",
  "lineage",
  "forked_from",
  "final_answer",
  "error",
  "usage",
  "updates",
  "pending",
  "cancel_requested",
  "config",
  "waiting",
  "waiting_id",
  "group",
  "group_base",
  "group_joined",
  "verdict",
  "created_at",
  "updated_at",
] as const;
type Uncovered = Exclude<
  keyof BranchRecord,
  "pk" | "sk" | "plan" | (typeof STEP_ATTRIBUTES)[number]
>;
/** Fails to compile, naming the attribute, when a branch attribute is left out of `STEP_ATTRIBUTES`. */
const StepAttributesCover: [Uncovered] extends [never] ? true : Uncovered = true;
void StepAttributesCover;

/** How many plans a store keeps (a plan is at most a few hundred kB; most are a few kB). */
const PLANS_KEPT = 256;

export class TaskStore {
  /** Committed plans by task and commit id, oldest first (they never change). */
  readonly #plans = new Map<string, Plan>();

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

  /**
   * The branch as a step reads it: every attribute but the plan, which comes from
   * the plans kept here by `plan_commit`, or else from that commit (one more read,
   * once per plan and process; the commit that sets a plan keeps it here). A step
   * from no head (`head` null) reads the whole item: a task created with a plan has
   * it on its branch before any commit. So does a branch with a plan but no plan
   * commit (a read of the plan alone).
   */
  async getBranchForStep(
    tenant: string,
    taskId: string,
    name: string,
    head: string | null,
  ): Promise<BranchRecord | null> {
    if (head === null) return this.getBranch(tenant, taskId, name);
    const key = branchKey(tenant, taskId, name);
    const item = await this.items.get(key, { attributes: STEP_ATTRIBUTES });
    if (!item) return null;
    const branch = item as unknown as BranchRecord;
    branch.plan = branch.plan_commit
      ? await this.#planOf(tenant, taskId, branch.plan_commit)
      : (((await this.items.get(key, { attributes: ["plan"] }))?.plan as Plan | undefined) ?? null);
    return branch;
  }

  async #planOf(tenant: string, taskId: string, commitId: string): Promise<Plan | null> {
    const id = `${tenant}/${taskId}/${commitId}`;
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

  /**
   * Applies changes to a branch if its head is still `expectedHead`. Given the branch
   * as read (`before`), only what changed comes back and is merged into it
   * (`mergeUpdated`), instead of the whole item with its plan and variables.
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
    if (!before)
      return (await this.items.update(key, changes, condition)) as unknown as BranchRecord;
    const answer = await this.items.update(key, changes, condition, { returns: "updated" });
    const moved = mergeUpdated(
      before as unknown as Item,
      changes,
      answer,
    ) as unknown as BranchRecord;
    if (moved.plan && moved.plan_commit) {
      this.#keepPlan(`${tenant}/${taskId}/${moved.plan_commit}`, moved.plan);
    }
    return moved;
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
