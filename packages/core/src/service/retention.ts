/**
 * Retention: a finished task is deleted, with its branches, commits, blobs and
 * LLM traces, a number of days after it ended. The days come from the task's
 * namespace (`retention_days`), else the tenant's (an operator's quota
 * override), else the deployment's default (`STACKVM_RETENTION_DAYS`); none of
 * them set keeps tasks until deleted by hand.
 *
 * When a task ends, a marker with its expiry time is written in its partition
 * and listed by time in one index partition (`store/expiry-store.ts`). The sweep
 * reads the markers that are due, oldest first, and for each one reads the task
 * again, so that what changed since it ended decides:
 * - a task `keep` exempts is left alone (its marker goes);
 * - a task running or waiting again (retried) loses its marker: its next end
 *   writes a new one;
 * - a task with a branch still going (a fork) is looked at again an hour later;
 * - otherwise its record is deleted first, and only as it was read: a fork or a
 *   retry made since touched it (`branches.ts` writes the branch, then touches
 *   the task), so either the sweep's delete fails and the task is looked at
 *   again later, or the fork finds no task and is undone;
 * - then its blobs, its traces and its items, the marker last, so that a sweep
 *   cut short (a crash, a Lambda's timeout) finds the marker again and
 *   finishes the deletion.
 *
 * DynamoDB's TTL does not fit here: it would delete items while S3 keeps their
 * blobs, it cannot ask whether a task runs again or is kept, and a task's items
 * are written before its end (its expiry) is known. Blobs are content-addressed
 * under the task's own prefix (`taskBlobPrefix`): the branches of one task share
 * a value, another task never reads it (the same bytes in another task are
 * stored again under that task's prefix), so deleting the prefix of a task that
 * no branch runs takes nothing a live task reads.
 */

import { isErrorKind, NotFoundError } from "../errors";
import { llmTracePrefix } from "../llm/trace";
import { TERMINAL_STATUSES } from "../model-values";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { ExpiryMarker, ExpiryStore } from "../store/expiry-store";
import { EXPIRY_SK } from "../store/keys";
import type { TaskRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { taskBlobPrefix } from "../store/values";

const DAY_MS = 86_400_000;
/**
 * The pause after each deleted task. Locally the sweep shares the process (and
 * the emulator) with the live steps: without it, deleting back to back took
 * 1.7 times the CPU of a step from the steps beside it (`npm run bench:retention`).
 * On AWS it costs the sweep's Lambda 5 s of 200 tasks.
 */
export const RETENTION_PACE_MS = 25;
/** How long a task with a branch still going waits before it is looked at again. */
export const RETENTION_RECHECK_MS = 3_600_000;

export interface RetentionDeps {
  store: TaskStore;
  expiries: ExpiryStore;
  blobs: Blobs;
  clock: Clock;
  log: Log;
  /** The tenant's days (its override, else the deployment's default); null: kept. */
  tenantDays: (tenant: string) => Promise<number | null>;
}

/** What one sweep did. */
export interface RetentionSweep {
  /** Tasks deleted (a deletion an earlier sweep left half done included). */
  deleted: number;
  /** Markers dropped: the task is kept, or runs again. */
  dropped: number;
  /** Tasks with a branch still going, looked at again later. */
  postponed: number;
}

/**
 * The sweep and the expiry markers. The worker builds it on first use (a task's
 * end), and the hook that writes a marker is `retention-hook.ts`.
 */
export class Retention {
  constructor(private readonly deps: RetentionDeps) {}

  /** Writes the task's marker `days` after now; none for a kept task or where no retention is set. */
  async schedule(task: TaskRecord, namespaceDays: number | undefined): Promise<void> {
    if (task.keep) return;
    const days = namespaceDays ?? (await this.deps.tenantDays(task.tenant_id));
    if (days === null) return;
    const expiresAt = new Date(this.deps.clock.now() + days * DAY_MS).toISOString();
    await this.deps.expiries.put(task.tenant_id, task.task_id, expiresAt);
  }

  /**
   * Sets or clears the task's `keep`. Kept, it has no marker; let go, a finished
   * task gets one from now, as if it had just ended.
   */
  async keep(tenant: string, taskId: string, keep: boolean): Promise<{ keep: boolean }> {
    const now = new Date(this.deps.clock.now()).toISOString();
    const task = await this.deps.store
      .updateTask(tenant, taskId, { keep, updated_at: now })
      .catch((error: unknown) => {
        if (isErrorKind(error, "conflict")) throw new NotFoundError("task", taskId);
        throw error;
      });
    if (keep) await this.deps.expiries.delete(tenant, taskId);
    else if (TERMINAL_STATUSES.has(task.status)) {
      const result = await this.deps.store.getBranch(tenant, taskId, task.branch);
      await this.schedule(task, result?.config.namespace.retention_days);
    }
    return { keep };
  }

  /**
   * Deletes the due tasks, up to `maxTasks`, one at a time (the live steps share
   * the table). Answers what it did; a failure of one task is logged and its
   * marker stays for the next sweep.
   */
  async sweep(maxTasks = 200, paceMs = RETENTION_PACE_MS): Promise<RetentionSweep> {
    const done: RetentionSweep = { deleted: 0, dropped: 0, postponed: 0 };
    const now = new Date(this.deps.clock.now()).toISOString();
    let left = maxTasks;
    while (left > 0) {
      const due = await this.deps.expiries.due(now, Math.min(left, 100));
      if (due.length === 0) break;
      for (const marker of due) {
        try {
          const outcome = await this.expire(marker);
          done[outcome]++;
          if (outcome === "deleted" && paceMs > 0) await new Promise((r) => setTimeout(r, paceMs));
        } catch (error) {
          this.deps.log.error(
            "retention: deleting an expired task failed; tried again in an hour",
            {
              tenant: marker.tenant_id,
              task_id: marker.task_id,
              error: String(error),
            },
          );
          // Out of the way of the others: the marker moves on, or the sweep stops here.
          const later = new Date(this.deps.clock.now() + RETENTION_RECHECK_MS).toISOString();
          const moved = await this.deps.expiries.put(marker.tenant_id, marker.task_id, later).then(
            () => true,
            () => false,
          );
          if (!moved) return done;
        }
      }
      left -= due.length;
    }
    return done;
  }

  /** Decides about one due marker, and deletes its task when nothing keeps it. */
  async expire(marker: ExpiryMarker): Promise<keyof RetentionSweep> {
    const { tenant_id: tenant, task_id: taskId } = marker;
    const task = await this.deps.store.getTask(tenant, taskId);
    if (task) {
      if (task.keep || !TERMINAL_STATUSES.has(task.status)) {
        await this.deps.expiries.delete(tenant, taskId);
        return "dropped";
      }
      const branches = await this.deps.store.listBranches(tenant, taskId);
      const going = branches.some((b) => !TERMINAL_STATUSES.has(b.status));
      if (going || !(await this.deleteUnchanged(task))) {
        const later = new Date(this.deps.clock.now() + RETENTION_RECHECK_MS).toISOString();
        await this.deps.expiries.put(tenant, taskId, later);
        return "postponed";
      }
    }
    // No record: a deletion cut short after the record went. Finish it.
    await this.purge(tenant, taskId);
    return "deleted";
  }

  /** Deletes the task's record if it is as read; false when a fork or a retry changed it since. */
  private async deleteUnchanged(task: TaskRecord): Promise<boolean> {
    return this.deps.store.deleteTaskIfUnchanged(task);
  }

  /** The blobs and traces, then every item but the record and the marker, then those two. */
  async purge(tenant: string, taskId: string): Promise<void> {
    await this.deps.blobs.deletePrefix(taskBlobPrefix(tenant, taskId));
    await this.deps.blobs.deletePrefix(llmTracePrefix(tenant, taskId));
    const store = this.deps.store;
    await store.deleteTaskItems(tenant, taskId, (k) => k.sk === EXPIRY_SK || k.sk === "TASK");
    await store.deleteTaskRecord(tenant, taskId);
    await this.deps.expiries.delete(tenant, taskId);
  }
}
