/**
 * The session's budget check: what the branch had left when the step started,
 * less what this session's calls spent. Checked before every call, so a step
 * stops at the first call past its budget with a message that says which limit
 * ran out and which setting raises it.
 */
import { BudgetExceededError } from "../errors";
import type { LlmCall } from "../model";
import type { LlmBudget } from "./types";

/**
 * Throws `budget_exceeded` when `calls` spent what `budget` had left (tokens
 * first, then cost).
 *
 * @example
 * checkSessionBudget({ tokensLeft: 100, maxTokens: 1_000 }, session.calls);
 */
export function checkSessionBudget(budget: LlmBudget, calls: readonly LlmCall[]): void {
  const spentTokens = calls.reduce((sum, c) => sum + c.input_tokens + c.output_tokens, 0);
  const spentCost = calls.reduce((sum, c) => sum + c.cost_usd, 0);
  if (budget.tokensLeft !== undefined && budget.tokensLeft - spentTokens <= 0) {
    throw tokensSpent(budget, budget.tokensLeft - spentTokens);
  }
  if (budget.costLeftUsd !== undefined && budget.costLeftUsd - spentCost <= 0) {
    throw costSpent(budget, budget.costLeftUsd - spentCost);
  }
}

const count = (n: number) => Math.round(n).toLocaleString("en-US");
const usd = (n: number) => `$${n.toFixed(4)}`;

function tokensSpent(budget: LlmBudget, left: number): BudgetExceededError {
  const details = { budget: "max_tokens", tokens_left: left, max_tokens: budget.maxTokens };
  if (budget.maxTokens === undefined) {
    return new BudgetExceededError(
      `max_tokens budget spent: ${left === 0 ? "no tokens left" : `${count(-left)} tokens over`}; raise budget.max_tokens to go on`,
      details,
    );
  }
  const used = budget.maxTokens - left;
  return new BudgetExceededError(
    `max_tokens budget spent: ${count(used)} of ${count(budget.maxTokens)} tokens used; raise budget.max_tokens to go on`,
    details,
  );
}

function costSpent(budget: LlmBudget, left: number): BudgetExceededError {
  const details = { budget: "max_cost_usd", cost_left_usd: left, max_cost_usd: budget.maxCostUsd };
  if (budget.maxCostUsd === undefined) {
    return new BudgetExceededError(
      `max_cost_usd budget spent: ${left === 0 ? "nothing left" : `${usd(-left)} over`}; raise budget.max_cost_usd to go on`,
      details,
    );
  }
  const used = budget.maxCostUsd - left;
  return new BudgetExceededError(
    `max_cost_usd budget spent: ${usd(used)} of ${usd(budget.maxCostUsd)} used; raise budget.max_cost_usd to go on`,
    details,
  );
}
