/**
 * What a client does to a whole task once it runs: cancel it (every branch that
 * is not finished stops at its next step boundary) or delete it with all it
 * stored.
 */

import { llmTracePrefix } from "../llm/trace";
import type { Task } from "../model";
import { TERMINAL_STATUSES } from "../model-values";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Queue } from "../ports/queue";
import type { TaskStore } from "../store/task-store";
import { taskBlobPrefix } from "../store/values";
import { enqueueNext } from "../vm/enqueue";
import type { RunAdmission } from "./run-admission";
import type { TaskReads } from "./task-reads";

export interface TaskControlsDeps {
  store: TaskStore;
  blobs: Blobs;
  queue: Queue;
  clock: Clock;
  reads: Pick<TaskReads, "record" | "get">;
  /** Counts what a deleted branch spent for the month. */
  admission: Pick<RunAdmission, "countUsage">;
}

/** Cancelling and deleting tasks. */
export class TaskControls {
  constructor(private readonly deps: TaskControlsDeps) {}

  /** Asks every branch that is not finished to stop at its next step boundary. */
  async cancel(tenant: string, taskId: string): Promise<Task> {
    await this.deps.reads.record(tenant, taskId);
    const branches = await this.deps.store.listBranches(tenant, taskId);
    const now = new Date(this.deps.clock.now()).toISOString();
    for (const b of branches) {
      if (TERMINAL_STATUSES.has(b.status)) continue;
      const updated = await this.deps.store.updateBranch(tenant, taskId, b.name, {
        set: [
          [["cancel_requested"], true],
          [["updated_at"], now],
        ],
      });
      // A waiting branch has no step coming (`vm/wait.ts`), nor has one whose parallel
      // group runs until its members end (`vm/group.ts`): send one, which commits the cancel.
      if (updated.status === "waiting" || updated.group)
        await enqueueNext(this.deps, updated, updated.head, "cancel");
    }
    return this.deps.reads.get(tenant, taskId);
  }

  /** Deletes the task, its branches, commits, blobs and LLM traces. */
  async delete(tenant: string, taskId: string): Promise<void> {
    await this.deps.reads.record(tenant, taskId);
    const branches = await this.deps.store.listBranches(tenant, taskId);
    // Stop running branches first, so that no step writes into a half-deleted task;
    // what they spent counts for the month all the same.
    for (const b of branches) {
      await this.deps.admission.countUsage(tenant, taskId, b.name);
      await this.deps.store.deleteBranch(tenant, taskId, b.name).catch(() => undefined);
    }
    await this.deps.store.deleteTaskItems(tenant, taskId);
    await this.deps.blobs.deletePrefix(taskBlobPrefix(tenant, taskId));
    await this.deps.blobs.deletePrefix(llmTracePrefix(tenant, taskId));
    // A step that was in flight may have written one more commit: sweep again.
    await this.deps.store.deleteTaskItems(tenant, taskId);
  }
}
