/**
 * The month's budget as a task spends it. Each LLM call of a step first checks
 * the tenant's month (one read of its usage item) and, once made, charges its
 * tokens and dollars to the month and to the branch's meter item. Before this,
 * usage reached the month only when a branch ended, so six looping tasks of a
 * 200-token month each took the whole 200 at submit and spent 1,200 together.
 * Now tasks side by side stop within one call of the month's end.
 *
 * A branch's usage still reaches the month when it ends (`QuotaService.recordUsage`),
 * less what its meter item says was charged already, so calls made outside a
 * metered session still count, and none counts twice. A tenant without a monthly
 * budget is not metered (its limits are cached): its steps cost no extra read or
 * write.
 */
import { BudgetExceededError, StackVMError } from "../errors";
import type { SpendMeter } from "../llm/types";
import type { QuotaStore } from "../store/quota-store";

/** What the meter asks of the tenant's month (`QuotaService` is one). */
export interface MonthBudget {
  /** Throws `monthly_budget_exhausted` when nothing is left. */
  budgetLeft(tenant: string): Promise<unknown>;
  limits(tenant: string): Promise<{
    monthly_token_budget: number | null;
    monthly_cost_budget_usd: number | null;
  }>;
  addToMonth(tenant: string, usage: { tokens: number; cost_usd: number }): Promise<void>;
}

/**
 * The meter of one branch's LLM calls.
 *
 * @example
 * createLlmSession({ port, config, budget: { ...budgetLeft(branch), meter: monthMeter(quotas, quotaStore, "acme", taskId, "main") } })
 */
export function monthMeter(
  quotas: MonthBudget,
  stored: QuotaStore,
  tenant: string,
  taskId: string,
  branch: string,
): SpendMeter {
  return {
    async check() {
      try {
        await quotas.budgetLeft(tenant);
      } catch (error) {
        if (!(error instanceof StackVMError) || error.code !== "monthly_budget_exhausted")
          throw error;
        // A budget error, not a rate limit: the step fails and no plan update spends more.
        throw new BudgetExceededError(error.message, { budget: "monthly" });
      }
    },
    async spend(tokens, costUsd) {
      if (tokens === 0 && costUsd === 0) return;
      // Without a monthly budget nothing waits on the count: the branch's usage
      // reaches the month when it ends, and a step writes no more than before.
      const limits = await quotas.limits(tenant);
      if (limits.monthly_token_budget === null && limits.monthly_cost_budget_usd === null) return;
      await quotas.addToMonth(tenant, { tokens, cost_usd: costUsd });
      await stored.addMetered(tenant, taskId, branch, { tokens, cost_usd: costUsd });
    },
  };
}
