/**
 * The quotas as a run meets them: a new task, a retry and a fork each have their
 * budget lowered to what the month has left, claim a running slot or wait for
 * one, and count what a deleted branch spent. Without quotas (`TaskAdmission`
 * absent) every run is admitted with its own budget.
 */
import type { Budget, SlotWait } from "../model";
import type { TaskAdmission } from "./quotas";

/** The quotas' admission of runs, where there may be none. */
export class RunAdmission {
  constructor(private readonly admission?: TaskAdmission) {}

  /**
   * A run's budget, lowered to what the month has left; `RateLimitedError`
   * (`monthly_budget_exhausted`, 429) when the month's budget is spent.
   */
  async admitRun(tenant: string, budget: Budget): Promise<Budget> {
    const left = this.admission ? await this.admission.budgetLeft(tenant) : {};
    return capBudget(budget, left);
  }

  /**
   * Claims the task's running slot; false when all are taken (the run's branch is
   * then written `queued` and waits with {@link waitForSlot}).
   */
  claimSlot(tenant: string, taskId: string): Promise<boolean> {
    return this.admission ? this.admission.claim(tenant, taskId) : Promise.resolve(true);
  }

  /** Lists the task's `queued` branch (`main` when none is named) as waiting for a slot, since `since`. */
  async waitForSlot(tenant: string, taskId: string, since: string, branch?: string): Promise<void> {
    await this.admission?.wait(tenant, taskId, since, branch);
  }

  /** Frees the task's slot (a start or a retry undone). */
  async releaseSlot(tenant: string, taskId: string): Promise<void> {
    await this.admission?.release(tenant, taskId);
  }

  /**
   * Counts a branch's usage for the month before it is deleted: one that had not
   * ended (whose end would have counted it) spent tokens all the same.
   */
  async countUsage(tenant: string, taskId: string, branch: string): Promise<void> {
    await this.admission?.countUsage?.(tenant, taskId, branch);
  }

  /** A queued task's place in line for a slot; null when it waits for none or there is no line. */
  async position(tenant: string, taskId: string): Promise<SlotWait | null> {
    return this.admission?.position ? this.admission.position(tenant, taskId) : null;
  }

  /** The places in line of the tenant's waiting tasks; null when there is no line to read. */
  async positions(tenant: string): Promise<Map<string, SlotWait> | null> {
    return this.admission?.positions ? this.admission.positions(tenant) : null;
  }
}

/** The budget, lowered to what the tenant's month has left. */
function capBudget(budget: Budget, left: { tokens?: number; costUsd?: number }): Budget {
  const capped = { ...budget };
  if (left.tokens !== undefined)
    capped.max_tokens = Math.min(budget.max_tokens ?? left.tokens, left.tokens);
  if (left.costUsd !== undefined) {
    capped.max_cost_usd = Math.min(budget.max_cost_usd ?? left.costUsd, left.costUsd);
  }
  return capped;
}
