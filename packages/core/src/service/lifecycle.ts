/**
 * What happens around a branch's steps: the task turns `running` with its first
 * commit, and when its result branch ends the task record takes the branch's
 * status and answer, then the terminal hooks run (outgoing webhooks, evaluation).
 */

import type { Clock } from "../ports/clock";
import type { BranchRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { TerminalHook } from "../vm/step-deps";

export interface Lifecycle {
  onStart: TerminalHook;
  onTerminal: TerminalHook;
}

export function taskLifecycle(
  store: TaskStore,
  clock: Clock,
  afterTerminal: TerminalHook[] = [],
): Lifecycle {
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
          if ((error as { kind?: string }).kind !== "conflict") throw error;
        });
    },
    async onTerminal(branch: BranchRecord) {
      const task = await store.getTask(branch.tenant_id, branch.task_id);
      if (!task) return;
      // A rejected answer is not the end of an evaluated task: the evaluation hook
      // (`evaluation.ts`) tries again or promotes the best answer, then ends the task.
      const rejected = task.evaluate && branch.verdict !== null && branch.verdict?.accept === false;
      if (task.branch === branch.name && !rejected) {
        await store.updateTask(branch.tenant_id, branch.task_id, {
          status: branch.status,
          final_answer: branch.final_answer ?? null,
          error: branch.error,
          updated_at: new Date(clock.now()).toISOString(),
        });
      }
      for (const hook of afterTerminal) await hook(branch);
    },
  };
}
