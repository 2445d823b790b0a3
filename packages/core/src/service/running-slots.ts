/**
 * Running tasks at once, per tenant. A task runs while it holds a slot: an
 * attribute `run#{task}` (when it was claimed) of the tenant's one item
 * `T#{t}` / `RUNNING`, which also counts them (`count`). A task that finds no
 * room is written `queued`, with its branch not yet enqueued, and waits in
 * `T#{t}` / `WAIT#{created_at}#{task}` (oldest first). When a task ends, its slot
 * is freed and the oldest waiting tasks start. A retry of an ended task is a new
 * run of it: it claims the task's slot again, or waits in the same line with its
 * branch named (`WAIT#{asked_at}#{task}`, `branch`). A fork runs within its
 * task's slot and claims none (see docs/http-api.md, "Quotas").
 *
 * Claiming and freeing cost a constant number of store calls, whatever the
 * limit (they read every numbered slot item before, and `POST /v1/tasks` took
 * a median 1.16 s under load): a claim is one update that sets the task's
 * attribute and adds 1 to `count`, on condition that `count` is below the limit
 * and the attribute is absent; a release reads the item and removes the
 * attribute while subtracting 1, on condition that the attribute is still the
 * one read. The count and the set of holders change in the same write, so they
 * never drift apart, both are safe to repeat (terminal hooks run at least once),
 * and a crash can only leave a slot held by a task that ended or vanished, which
 * the sweep frees (`reap`). The item stays small: about 60 bytes per running task.
 *
 * Races end well: a task that starts to wait checks for room once more after it
 * is listed, so a slot freed in between is not missed; two starters of the same
 * waiting task claim the one slot (the second finds it held), and only one
 * moves the branch from `queued` (a conditional update).
 */
import { isErrorKind } from "../errors";
import type { SlotWait } from "../model";
import { TERMINAL_STATUSES } from "../model-values";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { Queue } from "../ports/queue";
import { sweepIndex } from "../store/keys";
import type { BranchRecord } from "../store/records";
import type { SlotStore } from "../store/slot-store";
import type { TaskStore } from "../store/task-store";
import { enqueueNext } from "../vm/enqueue";
import { failUnstarted } from "./task-starts";

export interface RunningSlotsDeps {
  slots: SlotStore;
  store: TaskStore;
  queue: Queue;
  clock: Clock;
  log: Log;
  /** The tenant's `max_running_tasks`. */
  limit: (tenant: string) => Promise<number>;
  /**
   * Whether the tenant's monthly budget is spent: then waiting tasks stay queued
   * (they start when the month turns or the operator raises the budget, at the
   * next release or sweep). None: never.
   */
  monthSpent?: (tenant: string) => Promise<boolean>;
}

export class RunningSlots {
  constructor(private readonly deps: RunningSlotsDeps) {}

  /**
   * Claims a slot for the task (or answers true if it holds one); false when all
   * are taken. One conditional update; one read more when it is refused.
   */
  async claim(tenant: string, taskId: string): Promise<boolean> {
    const limit = await this.deps.limit(tenant);
    const claimedAt = new Date(this.deps.clock.now()).toISOString();
    if (await this.deps.slots.claim(tenant, taskId, claimedAt, limit)) return true;
    // Refused: all taken, or this task holds one already (a repeated claim).
    return (await this.deps.slots.heldSince(tenant, taskId)) !== null;
  }

  /**
   * Lists a task whose branch was written `queued` as waiting, then starts
   * waiting tasks if slots are free (it may be this one). The branch is `main`
   * for a new task; a branch whose wait ended (`service/waits.ts`) starts at its head.
   */
  async wait(tenant: string, taskId: string, createdAt: string, branch = "main"): Promise<void> {
    await this.deps.slots.addWaiting(tenant, createdAt, taskId, branch);
    await this.startWaiting(tenant);
  }

  /**
   * The task's place in line for a slot (1: it starts next), or null when it is
   * not waiting for one. Reads the tenant's waiting list up to the task: only
   * asked for a task that is `queued`.
   */
  async position(tenant: string, taskId: string): Promise<SlotWait | null> {
    return (await this.positions(tenant, taskId)).get(taskId) ?? null;
  }

  /**
   * The places in line of the tenant's waiting tasks (1: it starts next), read
   * from the waiting list in one query per 100 waiting tasks, up to `upTo` when
   * given: a page of `GET /v1/tasks` reads it once for all its rows.
   */
  async positions(tenant: string, upTo?: string): Promise<Map<string, SlotWait>> {
    const found = new Map<string, SlotWait>();
    let limit: number | null = null;
    for await (const item of this.deps.slots.waiting(tenant)) {
      limit ??= await this.deps.limit(tenant);
      const taskId = item.task_id;
      found.set(taskId, { position: found.size + 1, max_running_tasks: limit });
      if (taskId === upTo) return found;
      if (found.size >= 10_000) break;
    }
    return found;
  }

  /** Frees the task's slot, then starts the oldest waiting tasks that now fit. */
  async release(tenant: string, taskId: string): Promise<void> {
    await this.free(tenant, taskId);
    await this.startWaiting(tenant);
  }

  /** Frees the task's slot: one read, and one conditional update when it holds one. */
  private async free(tenant: string, taskId: string): Promise<void> {
    const claimedAt = await this.deps.slots.heldSince(tenant, taskId);
    // Nothing to do, or freed meanwhile by another release of the same task (the store's condition).
    if (claimedAt !== null) await this.deps.slots.free(tenant, taskId, claimedAt);
  }

  /** Starts waiting tasks, oldest first, while slots are free. */
  async startWaiting(tenant: string): Promise<number> {
    let started = 0;
    // A task queued before the month was spent would spend past it once started.
    if (await this.deps.monthSpent?.(tenant)) return started;
    for (;;) {
      const next = await this.deps.slots.firstWaiting(tenant);
      if (!next) return started;
      const taskId = next.task_id;
      if (!(await this.claim(tenant, taskId))) return started;
      const ran = await this.startBranch(tenant, taskId, next.branch ?? "main");
      await this.deps.slots.deleteWaiting(next);
      if (ran === "gone") await this.free(tenant, taskId);
      if (ran === "started") started++;
    }
  }

  /** Moves the waiting task's branch from `queued` to `running` and enqueues its next step. */
  private async startBranch(
    tenant: string,
    taskId: string,
    name: string,
  ): Promise<"started" | "gone" | "taken"> {
    const now = new Date(this.deps.clock.now()).toISOString();
    let branch: BranchRecord;
    try {
      branch = await this.deps.store.updateBranch(
        tenant,
        taskId,
        name,
        {
          set: [
            [["status"], "running"],
            [["updated_at"], now],
            ...sweepIndex({ tenant_id: tenant, task_id: taskId, name }, now),
          ],
        },
        { exists: true, equals: { status: "queued" } },
      );
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      // Deleted meanwhile, or another starter was first.
      const existing = await this.deps.store.getBranch(tenant, taskId, name);
      return existing ? "taken" : "gone";
    }
    // A retry's branch (the task's result) turns the task `running`, as `main`'s first commit does.
    if (name !== "main") await this.markTaskRunning(tenant, taskId, name, now);
    // A new task's head is null: its first step; a resumed branch runs on from its head.
    await enqueueNext(this.deps, branch, branch.head, branch.head === null ? "" : `slot-${now}`);
    this.deps.log.info("a waiting task started", { tenant_id: tenant, task_id: taskId });
    return "started";
  }

  /** The task `running` again, if it still waits on this branch (one conditional update). */
  private async markTaskRunning(tenant: string, taskId: string, name: string, now: string) {
    await this.deps.store
      .updateTask(
        tenant,
        taskId,
        { status: "running", updated_at: now },
        { exists: true, equals: { status: "queued", branch: name } },
      )
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
  }

  /**
   * For the sweep: frees slots held longer than `heldMs` by tasks that ended or
   * were deleted (their terminal hook did not run or did not finish), or that
   * have no branch (a start cut short: the task fails, as nothing would run it),
   * and starts waiting tasks of tenants that have room. Answers how many slots
   * it freed.
   */
  async reap(heldMs: number): Promise<number> {
    const before = new Date(this.deps.clock.now() - heldMs).toISOString();
    const tenants = new Set<string>();
    let freed = 0;
    for await (const slot of this.deps.slots.heldSlots()) {
      if (slot.claimedAt >= before) continue;
      if (!(await this.abandoned(slot.tenant, slot.taskId))) continue;
      await this.free(slot.tenant, slot.taskId);
      freed++;
      tenants.add(slot.tenant);
    }
    for await (const slot of this.deps.slots.legacySlots(before)) {
      const tenant = slot.tenant_id as string;
      if (!(await this.abandoned(tenant, slot.task_id as string))) continue;
      await this.deps.slots.deleteLegacySlot(slot);
      freed++;
      tenants.add(tenant);
    }
    for await (const tenant of this.deps.slots.waitingTenants()) tenants.add(tenant);
    for (const tenant of tenants) await this.startWaiting(tenant);
    return freed;
  }

  /**
   * Whether a slot of the task is held for nothing: the task ended or was
   * deleted, or it never got a branch (a start cut short: it fails, as nothing
   * would run it).
   */
  private async abandoned(tenant: string, taskId: string): Promise<boolean> {
    const task = await this.deps.store.getTask(tenant, taskId);
    if (!task || TERMINAL_STATUSES.has(task.status)) return true;
    if ((await this.deps.store.listBranches(tenant, taskId)).length > 0) return false;
    await failUnstarted(this.deps.store, this.deps.clock, tenant, taskId);
    return true;
  }
}
