/**
 * Branches and commits as a product: list, read, state at any commit, diff, fork
 * (re-execute, with a suggestion, a plan, or one instruction replaced), promote,
 * delete.
 */
import { ConflictError, isErrorKind, NotFoundError, ValidationError } from "../errors";
import { randomId } from "../ids";
import type { Branch, Commit, Diff, State, Task } from "../model";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import { MAX_DEPTH } from "../store/keys";
import type { BranchRecord, CommitRecord, TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { enqueueNext } from "../vm/enqueue";
import { type StoredState, stateFromCommit, stateValues } from "../vm/state";
import { storedVariables } from "../vm/variables";
import type { ForkInput } from "./fork-input";
import { forkPending } from "./fork-pending";
import type { PlanChecks } from "./plan-checks";
import { addUsage, type Presenter } from "./present";
import type { RunAdmission } from "./run-admission";
import { diffStates } from "./state-diff";
import type { TaskReads } from "./task-reads";
import { markRunning, newBranch } from "./task-records";

export interface BranchServiceDeps {
  store: TaskStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  presenter: Presenter;
  tasks: Pick<TaskReads, "record" | "view">;
  checks: Pick<PlanChecks, "requireLlm" | "validate">;
  /** A fork's budget, and a deleted branch's usage for the month. */
  admission: Pick<RunAdmission, "admitRun" | "countUsage">;
}

export class BranchService {
  constructor(private readonly deps: BranchServiceDeps) {}

  // The public methods read the task once (`TaskReads.record`: a missing task, or
  // another tenant's, answers 404 before anything else); the helpers below take
  // that record, so that its tenant is the one already checked.

  private async branchRecord(task: TaskRecord, name: string): Promise<BranchRecord> {
    const branch = await this.deps.store.getBranch(task.tenant_id, task.task_id, name);
    if (!branch) throw new NotFoundError("branch", name);
    return branch;
  }

  async list(tenant: string, taskId: string): Promise<Branch[]> {
    await this.deps.tasks.record(tenant, taskId);
    const branches = await this.deps.store.listBranches(tenant, taskId);
    branches.sort((a, b) => a.created_at.localeCompare(b.created_at));
    return Promise.all(branches.map((b) => this.deps.presenter.branch(b)));
  }

  async get(tenant: string, taskId: string, name: string): Promise<Branch & { state: State }> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const branch = await this.branchRecord(task, name);
    const state: State = {
      pc: branch.pc,
      variables: await this.deps.presenter.values(
        await storedVariables(this.deps.store, this.deps.blobs, branch),
        tenant,
        taskId,
      ),
      plan: branch.plan ?? [],
      completed: branch.status === "completed",
    };
    return { ...(await this.deps.presenter.branch(branch)), state };
  }

  /**
   * The commits reachable from the branch head, newest first, back to the root:
   * the branch's own commits, then each ancestor's up to its fork point.
   */
  async commits(
    tenant: string,
    taskId: string,
    name: string,
    limit: number,
    cursor: string | null,
  ): Promise<{ commits: Commit[]; next_cursor: string | null }> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const branch = await this.branchRecord(task, name);
    const segments = [
      { bid: branch.bid, upto: branch.depth },
      ...branch.lineage.map((l) => ({ bid: l.bid, upto: l.upto })),
    ];
    let { segment, inner } = decodeCursor(cursor);
    const found: CommitRecord[] = [];
    while (found.length < limit && segment < segments.length) {
      const s = segments[segment]!;
      if (s.upto < 0) {
        segment++;
        continue;
      }
      const page = await this.deps.store.listOwnCommits(
        tenant,
        taskId,
        s.bid,
        s.upto,
        limit - found.length,
        inner,
      );
      found.push(...page.items);
      if (page.cursor) inner = page.cursor;
      else {
        segment++;
        inner = null;
      }
    }
    const more = segment < segments.length;
    return {
      commits: await Promise.all(found.map((c) => this.deps.presenter.commit(c, tenant, taskId))),
      next_cursor: more ? encodeCursor(segment, inner) : null,
    };
  }

  async commit(tenant: string, taskId: string, commitId: string): Promise<Commit> {
    const task = await this.deps.tasks.record(tenant, taskId);
    return this.deps.presenter.commit(await this.commitRecord(task, commitId), tenant, taskId);
  }

  private async commitRecord(task: TaskRecord, commitId: string): Promise<CommitRecord> {
    const commit = await this.deps.store.getCommit(task.tenant_id, task.task_id, commitId);
    if (!commit) throw new NotFoundError("commit", commitId);
    return commit;
  }

  /**
   * The state stored at a commit of `task`, which the caller has read with
   * `TaskReads.record` (so its tenant is checked); 404 for a missing commit.
   */
  async storedState(task: TaskRecord, commitId: string): Promise<StoredState> {
    const commit = await this.deps.store.getCommitHead(task.tenant_id, task.task_id, commitId);
    if (!commit) throw new NotFoundError("commit", commitId);
    return stateFromCommit(this.deps.store, this.deps.blobs, task.tenant_id, task.task_id, commit);
  }

  async state(tenant: string, taskId: string, commitId: string): Promise<State> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const s = await this.storedState(task, commitId);
    return {
      pc: s.pc,
      variables: await this.deps.presenter.values(
        await stateValues(this.deps.store, s),
        tenant,
        taskId,
      ),
      plan: s.plan ?? [],
      completed: s.completed,
    };
  }

  /** The difference from `against` (default: the parent) to `commitId`. */
  async diff(tenant: string, taskId: string, commitId: string, against?: string): Promise<Diff> {
    const task = await this.deps.tasks.record(tenant, taskId);
    // Both states at once when the base is named; else the base is the parent.
    const [to, named] = await Promise.all([
      this.storedState(task, commitId),
      against === undefined ? null : this.storedState(task, against),
    ]);
    const baseId = to.commit.parent_id;
    const from = named ?? (baseId ? await this.storedState(task, baseId) : null);
    return diffStates(this.deps, tenant, taskId, to, from);
  }

  /**
   * Forks a new branch at a commit; steps before it are not run again. With
   * `evaluationRound`, the fork is a new attempt after a rejected answer
   * (`evaluation.ts`): its suggestion comes from the judge.
   */
  async fork(
    tenant: string,
    taskId: string,
    input: ForkInput,
    options: {
      evaluationRound?: number;
      /** Runs once the branch is written, before its first step is queued; a throw undoes the fork. */
      beforeEnqueue?: (branch: BranchRecord) => Promise<void>;
      /**
       * A run that takes a running slot (a retry): `claim` after the budget is
       * checked, before the branch is written; when it finds none, the branch is
       * written `queued` and handed to `wait` instead of its first step being queued.
       */
      slot?: { claim: () => Promise<boolean>; wait: (branch: BranchRecord) => Promise<void> };
    } = {},
  ): Promise<Branch> {
    if (input.suggestion !== undefined) {
      this.deps.checks.requireLlm(
        "a fork with a suggestion needs one to rewrite the plan",
        "fork with an edited plan or step instead",
      );
    }
    const task = await this.deps.tasks.record(tenant, taskId);
    const state = await this.storedState(task, input.from_commit);
    const source = state.commit;
    // The task's branch (its config) and the branch of the commit (its lineage): one
    // or two reads, not every branch of the task (each fork made the list longer).
    // A commit whose branch is gone or renamed needs the list to find its lineage.
    const near = await Promise.all(
      [...new Set([task.branch, source.branch])].map((n) =>
        this.deps.store.getBranch(tenant, taskId, n),
      ),
    );
    const known = near.filter((b): b is BranchRecord => b !== null);
    const branches = known.some((b) => b.bid === source.bid)
      ? known
      : await this.deps.store.listBranches(tenant, taskId);
    const origin = branches.find((b) => b.name === task.branch) ?? branches[0];
    if (!origin) throw new NotFoundError("branch", task.branch);
    const lineage = lineageOf(branches, source);
    const name = input.name ?? `fork-${randomId(6)}`;

    // The task's mode (its own, or its namespace's when it started), as its steps run.
    const pending = await forkPending(this.deps.checks, input, state, {
      tenant,
      taskId,
      namespace: origin.config.namespace.name,
      compat: origin.config.namespace.plan_compat ?? "strict",
      evaluation: options.evaluationRound !== undefined,
    });

    // A fork is a run of its own: refused when the month's budget is spent, and
    // capped at what is left, as a new task (an evaluation round is part of its task's run).
    const config =
      options.evaluationRound === undefined
        ? {
            ...origin.config,
            budget: await this.deps.admission.admitRun(tenant, origin.config.budget),
          }
        : { ...origin.config, evaluation_round: options.evaluationRound };
    const now = new Date(this.deps.clock.now()).toISOString();
    const branch = newBranch(tenant, taskId, name, config, now);
    const admitted = options.slot ? await options.slot.claim() : true;
    if (admitted) markRunning(branch, now);
    Object.assign(branch, {
      head: source.commit_id,
      prev_head: source.parent_id,
      depth: source.depth,
      pc: state.pc,
      // A committed plan stays on its commit, which the new branch names.
      plan: source.plan_commit ? null : state.plan,
      plan_commit: source.plan_commit,
      chain: source.chain,
      lineage,
      forked_from: { branch: source.branch, commit_id: source.commit_id },
      pending,
    } satisfies Partial<BranchRecord>);
    await this.deps.store.createBranch(branch);
    try {
      // The task is touched once its branch is written: a retention sweep that read
      // the task before deletes it only unchanged (`retention.ts`), so either the
      // sweep sees this fork, or this fork finds the task gone and is undone.
      await this.deps.store.updateTask(tenant, taskId, { updated_at: now }).catch((error) => {
        if (isErrorKind(error, "conflict")) throw new NotFoundError("task", taskId);
        throw error;
      });
      await options.beforeEnqueue?.(branch);
      if (admitted) await enqueueNext(this.deps, branch, source.commit_id);
      else await options.slot?.wait(branch);
    } catch (error) {
      // All or nothing: a fork whose first step could not be queued is undone (unless
      // a step ran after all), so the caller's error is the truth and a retry forks
      // again; an undo that fails too leaves the branch to the sweep.
      await this.deps.store
        .deleteBranch(tenant, taskId, name, source.commit_id)
        .catch(() => undefined);
      throw error;
    }
    return this.deps.presenter.branch(branch);
  }

  /** Makes the branch the task's result branch. */
  async promote(tenant: string, taskId: string, name: string): Promise<Task> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const branch = await this.branchRecord(task, name);
    const promoted = await this.deps.store.updateTask(tenant, taskId, {
      branch: name,
      status: branch.status,
      final_answer: branch.final_answer,
      error: branch.error,
      updated_at: new Date(this.deps.clock.now()).toISOString(),
    });
    // The update answers the task as written: present it without reading it again.
    return this.deps.tasks.view(promoted);
  }

  /** Deletes a branch and the commits that no other branch reaches. */
  async delete(tenant: string, taskId: string, name: string): Promise<void> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const branch = await this.branchRecord(task, name);
    if (task.branch === name) {
      throw new ConflictError(
        `'${name}' is the task's result branch: promote another branch before deleting it`,
        "result_branch",
      );
    }
    const others = (await this.deps.store.listBranches(tenant, taskId)).filter(
      (b) => b.name !== name,
    );
    const keep = Math.max(
      -1,
      ...others.flatMap((b) => b.lineage.filter((l) => l.bid === branch.bid).map((l) => l.upto)),
    );
    // A branch deleted before it ended spent its tokens all the same.
    await this.deps.admission.countUsage(tenant, taskId, name);
    await this.deps.store.deleteBranch(tenant, taskId, name);
    const doomed = await this.deps.store.listCommitsBetween(
      tenant,
      taskId,
      branch.bid,
      keep + 1,
      MAX_DEPTH,
    );
    await this.deps.store.deleteCommits(doomed);
    await this.deps.store.updateTask(tenant, taskId, {
      deleted_usage: addUsage(task.deleted_usage, branch.usage),
    });
  }
}

/** The ancestor segments of a new branch forked at `commit`. */
function lineageOf(
  branches: BranchRecord[],
  commit: Pick<CommitRecord, "bid" | "branch" | "depth">,
): BranchRecord["lineage"] {
  const own = { bid: commit.bid, name: commit.branch, upto: commit.depth };
  const holder = branches.find((b) => b.bid === commit.bid);
  if (holder) return [own, ...holder.lineage];
  for (const b of branches) {
    const index = b.lineage.findIndex((l) => l.bid === commit.bid);
    if (index >= 0) return [own, ...b.lineage.slice(index + 1)];
  }
  return [own];
}

function encodeCursor(segment: number, inner: string | null): string {
  return Buffer.from(JSON.stringify([segment, inner])).toString("base64url");
}

function decodeCursor(cursor: string | null): { segment: number; inner: string | null } {
  if (!cursor) return { segment: 0, inner: null };
  try {
    const [segment, inner] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as [
      number,
      string | null,
    ];
    if (Number.isInteger(segment) && segment >= 0) return { segment, inner };
  } catch {
    // fall through to the error below
  }
  throw new ValidationError("bad_cursor", "the cursor is not one this API returned");
}
