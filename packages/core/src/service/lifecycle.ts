/**
 * What happens around a branch's steps: the task turns `running` with its first
 * commit, and when its result branch ends the task record takes the branch's
 * status and answer. Hooks: first those of every ended branch (quotas count its
 * usage), then evaluation, then those of an ended task (outgoing webhooks, quotas).
 */

import { isErrorKind } from "../errors";
import { TERMINAL_STATUSES } from "../model-values";
import type { Clock } from "../ports/clock";
import type { BranchRecord, TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { TerminalHook } from "../vm/step-deps";

export interface Lifecycle {
  onStart: TerminalHook;
  onTerminal: TerminalHook;
}

/**
 * Runs for every branch that ends, with the task record as the lifecycle left it;
 * it may fork, promote or end the task (`evaluation.ts`).
 */
export type EvaluationHook = (branch: BranchRecord, task: TaskRecord) => Promise<void>;

/**
 * Runs when a task ended on `branch` (its result branch, the task in a terminal
 * status), with the task record as it ended. `branches` lists the task's branches
 * on its first call; the hooks of one ending share that list.
 *
 * @example
 * const log: TaskEndHook = async (branch, task) => console.log(task.status, branch.name);
 */
export type TaskEndHook = (
  branch: BranchRecord,
  task: TaskRecord,
  branches: () => Promise<BranchRecord[]>,
) => Promise<void>;

/**
 * Runs for every branch that ends, first, whether or not the task ended with it
 * (a fork or a retry of a task that ended before): quotas count its usage.
 */
export type BranchEndHook = (branch: BranchRecord) => Promise<void>;

export interface LifecycleHooks {
  /** Run in order for every ended branch, before the others (quotas' usage). */
  onBranchEnd?: BranchEndHook[];
  /** Runs first, for every ended branch (evaluation). */
  evaluation?: EvaluationHook;
  /** Run in order once the task ended on the branch (outgoing webhooks, quotas). */
  afterTerminal?: TaskEndHook[];
}

export function taskLifecycle(
  store: TaskStore,
  clock: Clock,
  hooks: LifecycleHooks = {},
): Lifecycle {
  const { evaluation, afterTerminal = [], onBranchEnd = [] } = hooks;
  return {
    async onStart(branch: BranchRecord) {
      if (branch.name !== "main") return;
      await store
        .updateTask(
          branch.tenant_id,
          branch.task_id,
          { status: "running", updated_at: new Date(clock.now()).toISOString() },
          { exists: true, equals: { status: "queued" } },
        )
        .catch((error: unknown) => {
          if (!isErrorKind(error, "conflict")) throw error;
        });
    },
    async onTerminal(branch: BranchRecord) {
      const { tenant_id: tenant, task_id: taskId } = branch;
      for (const hook of onBranchEnd) await hook(branch);
      let task = await store.getTask(tenant, taskId);
      if (!task) return;
      // A rejected answer is not the end of an evaluated task: the evaluation hook
      // (`evaluation.ts`) tries again or promotes the best answer, then ends the task.
      const rejected = task.evaluate && branch.verdict !== null && branch.verdict?.accept === false;
      if (task.branch === branch.name && !rejected) {
        // Only while the task still names this branch: a retry may have just made
        // another branch its result (`retry.ts`), and this end must not undo that.
        const ended = await store
          .updateTask(
            tenant,
            taskId,
            {
              status: branch.status,
              final_answer: branch.final_answer ?? null,
              error: branch.error,
              updated_at: new Date(clock.now()).toISOString(),
            },
            { exists: true, equals: { branch: branch.name } },
          )
          .catch((error: unknown) => {
            if (isErrorKind(error, "conflict")) return null;
            throw error;
          });
        if (!ended) return;
        task = ended;
      }
      if (evaluation && branch.config.evaluate) {
        await evaluation(branch, task);
        // The hook may have forked, promoted or ended the task: read what it left.
        task = await store.getTask(tenant, taskId);
        if (!task) return;
      }
      if (task.branch !== branch.name || !TERMINAL_STATUSES.has(task.status)) return;
      let listed: Promise<BranchRecord[]> | undefined;
      const branches = () => {
        listed ??= store.listBranches(tenant, taskId);
        return listed;
      };
      for (const hook of afterTerminal) await hook(branch, task, branches);
    },
  };
}
