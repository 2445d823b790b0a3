/**
 * Running tasks at once, per tenant. A task runs while it holds one of the
 * tenant's numbered slots (`T#{t}` / `SLOT#{i}`, `i < max_running_tasks`); a task
 * that finds none free is written `queued`, with its `main` branch not yet
 * enqueued, and waits in `T#{t}` / `WAIT#{created_at}#{task}` (oldest first). When
 * a task ends, its slots are freed and the oldest waiting tasks start.
 *
 * Why slots and not a counter: claiming is a put on condition the slot is free,
 * and freeing is a delete on condition the slot still names the task, so both are
 * safe to repeat (terminal hooks run at least once) and a crash can only leave a
 * slot held by a task that ended or vanished, which the sweep frees (`reap`). A
 * counter would need its decrement to happen exactly once.
 *
 * Races end well: a task that starts to wait checks the slots once more after it
 * is listed, so a slot freed in between is not missed; two starters of the same
 * waiting task both may claim a slot, but only one moves the branch from `queued`
 * (a conditional update) and the task's slots are all freed when it ends.
 */
import { isErrorKind } from "../errors";
import { TERMINAL_STATUSES } from "../model";
import type { Clock } from "../ports/clock";
import type { ItemStore } from "../ports/item-store";
import type { Queue } from "../ports/queue";
import { tenantPk } from "../store/keys";
import type { BranchRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { enqueueNext, sweepIndex } from "../vm/step";
import type { Log } from "../vm/step-deps";
import { failUnstarted } from "./task-starts";

/** Global index partitions (gsi1) that let the sweep find held slots and waiting tasks. */
const SLOTS_INDEX = "SLOTS";
const WAITING_INDEX = "WAITING";

const slotKey = (tenant: string, index: number) => ({
  pk: tenantPk(tenant),
  sk: `SLOT#${String(index).padStart(4, "0")}`,
});
const waitKey = (tenant: string, createdAt: string, taskId: string) => ({
  pk: tenantPk(tenant),
  sk: `WAIT#${createdAt}#${taskId}`,
});

interface Slot {
  sk: string;
  task_id: string;
}

export interface RunningSlotsDeps {
  items: ItemStore;
  store: TaskStore;
  queue: Queue;
  clock: Clock;
  log: Log;
  /** The tenant's `max_running_tasks`. */
  limit: (tenant: string) => Promise<number>;
}

export class RunningSlots {
  constructor(private readonly deps: RunningSlotsDeps) {}

  private async slots(tenant: string): Promise<Slot[]> {
    const slots: Slot[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.deps.items.query({
        pk: tenantPk(tenant),
        prefix: "SLOT#",
        limit: 1000,
        cursor,
      });
      slots.push(...(page.items as unknown as Slot[]));
      cursor = page.cursor;
    } while (cursor);
    return slots;
  }

  /** Claims a slot for the task (or answers true if it holds one); false when all are taken. */
  async claim(tenant: string, taskId: string): Promise<boolean> {
    const limit = await this.deps.limit(tenant);
    for (let attempt = 0; attempt < 3; attempt++) {
      const held = await this.slots(tenant);
      if (held.some((s) => s.task_id === taskId)) return true;
      if (held.length >= limit) return false;
      const used = new Set(held.map((s) => Number(s.sk.slice(5))));
      const free = Array.from({ length: limit }, (_, i) => i).filter((i) => !used.has(i));
      if (free.length === 0) return false;
      // A random free slot, so that starters racing for slots rarely pick the same.
      const index = free[Math.floor(Math.random() * free.length)]!;
      const claimedAt = new Date(this.deps.clock.now()).toISOString();
      try {
        await this.deps.items.put(
          {
            ...slotKey(tenant, index),
            tenant_id: tenant,
            task_id: taskId,
            claimed_at: claimedAt,
            gsi1pk: SLOTS_INDEX,
            gsi1sk: `${claimedAt}#${tenant}#${index}`,
          },
          { exists: false },
        );
        return true;
      } catch (error) {
        if (!isErrorKind(error, "conflict")) throw error;
      }
    }
    return false;
  }

  /**
   * Lists a task whose branch was written `queued` as waiting, then starts
   * waiting tasks if slots are free (it may be this one). The branch is `main`
   * for a new task; a branch whose wait ended (`service/waits.ts`) starts at its head.
   */
  async wait(tenant: string, taskId: string, createdAt: string, branch = "main"): Promise<void> {
    await this.deps.items.put({
      ...waitKey(tenant, createdAt, taskId),
      tenant_id: tenant,
      task_id: taskId,
      ...(branch === "main" ? {} : { branch }),
      gsi1pk: WAITING_INDEX,
      gsi1sk: `${createdAt}#${tenant}#${taskId}`,
    });
    await this.startWaiting(tenant);
  }

  /** Frees the task's slots, then starts the oldest waiting tasks that now fit. */
  async release(tenant: string, taskId: string): Promise<void> {
    await this.free(tenant, taskId);
    await this.startWaiting(tenant);
  }

  private async free(tenant: string, taskId: string): Promise<void> {
    for (const slot of await this.slots(tenant)) {
      if (slot.task_id !== taskId) continue;
      await this.deps.items
        .delete({ pk: tenantPk(tenant), sk: slot.sk }, { equals: { task_id: taskId } })
        .catch((error: unknown) => {
          if (!isErrorKind(error, "conflict")) throw error;
        });
    }
  }

  /** Starts waiting tasks, oldest first, while slots are free. */
  async startWaiting(tenant: string): Promise<number> {
    let started = 0;
    for (;;) {
      const page = await this.deps.items.query({ pk: tenantPk(tenant), prefix: "WAIT#", limit: 1 });
      const next = page.items[0];
      if (!next) return started;
      const taskId = next.task_id as string;
      if (!(await this.claim(tenant, taskId))) return started;
      const ran = await this.startBranch(tenant, taskId, (next.branch as string) ?? "main");
      await this.deps.items.delete({ pk: next.pk, sk: next.sk });
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
            ...sweepIndex({ tenant_id: tenant, task_id: taskId, name: "main" }, now),
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
    // A new task's head is null: its first step; a resumed branch runs on from its head.
    await enqueueNext(this.deps, branch, branch.head, branch.head === null ? "" : `slot-${now}`);
    this.deps.log.info("a waiting task started", { tenant_id: tenant, task_id: taskId });
    return "started";
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
    let cursor: string | null = null;
    do {
      const page = await this.deps.items.query({
        pk: SLOTS_INDEX,
        index: "gsi1",
        between: ["0", before],
        limit: 100,
        cursor,
      });
      for (const slot of page.items) {
        const tenant = slot.tenant_id as string;
        const taskId = slot.task_id as string;
        const task = await this.deps.store.getTask(tenant, taskId);
        if (task && !TERMINAL_STATUSES.has(task.status)) {
          if ((await this.deps.store.listBranches(tenant, taskId)).length > 0) continue;
          await failUnstarted(this.deps.store, this.deps.clock, tenant, taskId);
        }
        await this.deps.items
          .delete({ pk: slot.pk, sk: slot.sk }, { equals: { task_id: slot.task_id as string } })
          .catch((error: unknown) => {
            if (!isErrorKind(error, "conflict")) throw error;
          });
        freed++;
        tenants.add(tenant);
      }
      cursor = page.cursor;
    } while (cursor);
    cursor = null;
    do {
      const page = await this.deps.items.query({
        pk: WAITING_INDEX,
        index: "gsi1",
        limit: 100,
        cursor,
      });
      for (const item of page.items) tenants.add(item.tenant_id as string);
      cursor = page.cursor;
    } while (cursor);
    for (const tenant of tenants) await this.startWaiting(tenant);
    return freed;
  }
}
