/**
 * `POST /v1/tasks/{id}/retry`: runs an ended task again on a new branch, which
 * becomes the task's result branch at once (so the task, its events, the
 * console and the CLI follow the new run).
 *
 * - `from: "start"`: a branch with no commits: the planner writes a new plan
 *   from the goal, or the plan the client submitted runs again.
 * - `from: "last_commit"` (the default): a fork that re-runs from the result
 *   branch's head, so the step that failed runs again; a task with no plan yet
 *   (it failed while planning) starts over as with "start".
 *
 * A retry is a new run of the task: refused (429 `monthly_budget_exhausted`)
 * when the month's budget is spent and capped at what is left, as a new task;
 * it claims the task's running slot, or waits `queued` for one (the task shows
 * `waiting_for_slot`), and frees it when it ends; its usage counts for the month
 * when its branch ends (`quotas.ts`).
 *
 * A task still at work (queued, running, waiting) answers 409: cancel it first.
 * The branch becomes the result with a conditional write on the task, so two
 * retries sent at once make one run (the other answers 409, its branch undone);
 * with an `Idempotency-Key`, the same key answers the branch it made, and the
 * same key with another body answers 409 `idempotency_key_reused`, as for tasks.
 */
import * as z from "zod";
import { ConflictError, isErrorKind, ValidationError } from "../errors";
import { randomId } from "../ids";
import type { Branch } from "../model";
import { TERMINAL_STATUSES } from "../model-values";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import { commitId } from "../store/keys";
import type { BranchRecord, TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { enqueueNext } from "../vm/enqueue";
import { SUBMITTED_PLAN } from "../vm/pending";
import type { BranchService } from "./branches";
import type { PlanChecks } from "./plan-checks";
import type { Presenter } from "./present";
import { checkRetryKey, claimRetryKey, releaseRetryKey } from "./retry-key";
import type { RunAdmission } from "./run-admission";
import type { TaskReads } from "./task-reads";
import { markRunning, newBranch } from "./task-records";

export const RETRY_FROM = ["start", "last_commit"] as const;

export const RetryInput = z
  .object({
    from: z.string().max(64).optional().describe('"start" or "last_commit" (the default)'),
  })
  .strict();
export type RetryInput = z.infer<typeof RetryInput>;

export interface RetryServiceDeps {
  store: TaskStore;
  queue: Queue;
  clock: Clock;
  presenter: Presenter;
  tasks: Pick<TaskReads, "record">;
  checks: Pick<PlanChecks, "requireLlm">;
  /** The retry's budget and running slot, as a new task's. */
  admission: RunAdmission;
  branches: BranchService;
}

/** The task's running slot, as a retry claims it (`RetryService.slot`). */
interface RetrySlot {
  held: boolean;
  claim: () => Promise<boolean>;
  wait: (branch: BranchRecord) => Promise<void>;
}

export class RetryService {
  constructor(private readonly deps: RetryServiceDeps) {}

  async retry(
    tenant: string,
    taskId: string,
    input: RetryInput,
    idempotencyKey: string | null = null,
  ): Promise<{ branch: Branch; replayed: boolean }> {
    const from = input.from ?? "last_commit";
    if (!(RETRY_FROM as readonly string[]).includes(from)) {
      throw new ValidationError(
        "invalid_retry_from",
        `"from" must be "start" or "last_commit", not '${from.slice(0, 64)}': "start" runs the task again from its goal (or the plan it was given), "last_commit" runs again from the last commit of its result branch`,
        { field: "from", allowed: RETRY_FROM },
      );
    }
    const task = await this.deps.tasks.record(tenant, taskId);
    // The key names its body, as a task's does: the same key with another body is a 409.
    const body = { from };
    const items = this.deps.store;
    const now = this.deps.clock.now();
    if (idempotencyKey !== null) {
      const held = await checkRetryKey(items, tenant, taskId, idempotencyKey, body, now);
      const made = held === null ? null : await this.deps.store.getBranch(tenant, taskId, held);
      if (made) return { branch: await this.deps.presenter.branch(made), replayed: true };
    }
    const result = await this.deps.store.getBranch(tenant, taskId, task.branch);
    const status = result?.status ?? task.status;
    if (!TERMINAL_STATUSES.has(status)) {
      throw new ConflictError(
        `task '${taskId}' is ${status}: only a task that ended can be retried; cancel it first (POST /v1/tasks/${taskId}/cancel), or fork one of its commits`,
        "task_not_ended",
      );
    }
    // With a key, the claim names the branch, the same for a request sent twice.
    const name =
      idempotencyKey === null
        ? `retry-${randomId(6)}`
        : await claimRetryKey(items, tenant, taskId, idempotencyKey, body, now);
    const promote = (branch: BranchRecord) => this.promote(task, branch);
    const slot = this.slot(task, name);
    const head = result?.head ?? null;
    const undo = async (error: unknown): Promise<never> => {
      // A retry that made nothing frees its key, unless another request with it made the branch.
      if (idempotencyKey !== null && (error as { code?: string }).code !== "branch_exists") {
        await releaseRetryKey(items, tenant, taskId, idempotencyKey).catch(() => undefined);
      }
      return this.undone(task, name, idempotencyKey, slot.held, error);
    };
    if (from === "last_commit" && result && head !== null) {
      const state = await this.deps.branches.storedState(task, head);
      if (state.plan !== null && state.pc === null) {
        if (idempotencyKey !== null) await releaseRetryKey(items, tenant, taskId, idempotencyKey);
        throw new ValidationError(
          "nothing_to_run",
          `task '${taskId}' ${status} at its last commit ${head}, so there is no step left to run from it: run it again from its goal with {"from": "start"}, or fork an earlier commit to run from there (POST /v1/tasks/${taskId}/branches with {"from_commit": "<commit_id>"}; GET /v1/tasks/${taskId}/branches/${task.branch}/commits lists them)`,
          { from, commit_id: head },
        );
      }
      if (state.plan !== null) {
        const branch = await this.deps.branches
          .fork(tenant, taskId, { from_commit: head, name }, { beforeEnqueue: promote, slot })
          .catch(undo);
        return { branch, replayed: false };
      }
    }
    const branch = await this.fromStart(task, result, name, slot).catch(undo);
    return { branch, replayed: false };
  }

  /**
   * The task's running slot for the retry's branch: `held` once claimed, so that
   * a retry undone frees it; without one, the branch waits `queued` in line.
   */
  private slot(task: TaskRecord, name: string): RetrySlot {
    const { tenant_id: tenant, task_id: taskId } = task;
    const slot: RetrySlot = {
      held: false,
      claim: async () => {
        slot.held = await this.deps.admission.claimSlot(tenant, taskId);
        return slot.held;
      },
      wait: () =>
        this.deps.admission.waitForSlot(
          tenant,
          taskId,
          new Date(this.deps.clock.now()).toISOString(),
          name,
        ),
    };
    return slot;
  }

  /**
   * After a retry failed: the same key sent twice at once finds its branch made
   * by the other request (answered as made); else the task is put back if it was
   * already promoted, and the error stands.
   */
  private async undone(
    task: TaskRecord,
    name: string,
    idempotencyKey: string | null,
    heldSlot: boolean,
    error: unknown,
  ): Promise<never> {
    if (idempotencyKey !== null && (error as { code?: string }).code === "branch_exists") {
      throw new ConflictError(
        `a retry with this Idempotency-Key is being made by another request: read task '${task.task_id}' again`,
        "retry_in_progress",
      );
    }
    // A conflict: another retry was first, and runs in the task's slot.
    if (!isErrorKind(error, "conflict")) {
      await this.restore(task, name).catch(() => undefined);
      if (heldSlot) await this.deps.admission.releaseSlot(task.tenant_id, task.task_id);
    }
    throw error;
  }

  /** A branch with no commits, from the task's goal or the plan it was given. */
  private async fromStart(
    task: TaskRecord,
    result: BranchRecord | null,
    name: string,
    slot: RetrySlot,
  ): Promise<Branch> {
    const { tenant_id: tenant, task_id: taskId } = task;
    if (!result) {
      throw new ConflictError(
        `task '${taskId}' has no branch to take its settings from: start it again with POST /v1/tasks`,
        "task_not_started",
      );
    }
    const plan = await this.submittedPlan(result);
    if (plan === null) this.deps.checks.requireLlm();
    const budget = await this.deps.admission.admitRun(tenant, result.config.budget);
    const admitted = await slot.claim();
    const now = new Date(this.deps.clock.now()).toISOString();
    const branch = newBranch(tenant, taskId, name, { ...result.config, budget }, now);
    branch.plan = plan;
    if (admitted) markRunning(branch, now);
    await this.deps.store.createBranch(branch);
    try {
      await this.promote(task, branch);
      if (admitted) await enqueueNext(this.deps, branch, null);
      else await slot.wait(branch);
    } catch (error) {
      // All or nothing: the branch goes (`undone` puts the task back).
      await this.deps.store.deleteBranch(tenant, taskId, name, null).catch(() => undefined);
      throw error;
    }
    return this.deps.presenter.branch(branch);
  }

  /**
   * The plan the client gave the task, if it was given one: on the branch before
   * its first commit, or in the root commit (the plan commit) after it.
   */
  private async submittedPlan(result: BranchRecord): Promise<BranchRecord["plan"]> {
    if (result.head === null) return result.plan;
    const rootBid = result.lineage.at(-1)?.bid ?? result.bid;
    const root = await this.deps.store.getCommit(
      result.tenant_id,
      result.task_id,
      commitId(rootBid, 0),
    );
    if (root?.type !== "plan" || root.details?.reasoning !== SUBMITTED_PLAN) return null;
    return root.plan ?? null;
  }

  /** Makes the new branch the task's result, if no other retry did since the task was read. */
  private async promote(task: TaskRecord, branch: BranchRecord): Promise<void> {
    try {
      await this.deps.store.updateTask(
        task.tenant_id,
        task.task_id,
        {
          branch: branch.name,
          status: branch.status,
          final_answer: null,
          error: null,
          updated_at: new Date(this.deps.clock.now()).toISOString(),
        },
        // Another retry moves the task to its own new branch. The task's own end
        // (`lifecycle.ts`) may land after the branch ended and the task was read: it
        // writes only while the task still names that branch, so it cannot undo this.
        { exists: true, equals: { branch: task.branch } },
      );
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      throw new ConflictError(
        `task '${task.task_id}' changed while it was being retried (another retry was first): read it again`,
        "task_not_ended",
      );
    }
  }

  /** Puts the task back as it was before a retry that could not be queued. */
  private async restore(task: TaskRecord, name: string): Promise<void> {
    await this.deps.store.updateTask(
      task.tenant_id,
      task.task_id,
      {
        branch: task.branch,
        status: task.status,
        final_answer: task.final_answer,
        error: task.error,
        updated_at: new Date(this.deps.clock.now()).toISOString(),
      },
      { exists: true, equals: { branch: name } },
    );
  }
}
