/**
 * What an ingest may spend and what it is charged: the tenant's month (its
 * `QuotaService`) says what is left before the first call, the calls are checked
 * against it between stages, and the month is charged once, with everything the
 * ingest spent, when the document is finished (ready or failed).
 */
import { BudgetExceededError, isErrorKind } from "../errors";
import type { BudgetLeft } from "../llm/types";
import type { LlmCall } from "../model";
import type { IngestUsage } from "./model";

/** The month's budget of a tenant, as ingest uses it (`QuotaService`). */
export interface IngestBudget {
  /** What is left; throws `RateLimitedError` (`monthly_budget_exhausted`) when nothing is. */
  left(tenant: string): Promise<BudgetLeft>;
  /** Adds an ingest's tokens and cost to the month. */
  record(tenant: string, usage: { tokens: number; cost_usd: number }): Promise<void>;
}

/** What the tenant's month has left (no budget: no limit); a spent month fails the document, saying so. */
export async function budgetLeft(
  budget: IngestBudget | undefined,
  tenant: string,
): Promise<BudgetLeft> {
  if (!budget) return {};
  try {
    return await budget.left(tenant);
  } catch (error) {
    if (!isErrorKind(error, "rate_limited")) throw error;
    throw new BudgetExceededError(
      "not ingested: the tenant's monthly budget is spent; upload the document again next month, or once the operator raises monthly_token_budget / monthly_cost_budget_usd",
    );
  }
}

/** Stops an ingest whose calls spent what the month had left (checked between stages). */
export function checkSpent(left: BudgetLeft, calls: LlmCall[]): void {
  const { tokens, cost } = spent(calls);
  if (
    (left.tokens !== undefined && tokens >= left.tokens) ||
    (left.costUsd !== undefined && cost >= left.costUsd)
  ) {
    throw ranOut(calls);
  }
}

/** The error of an ingest that the month ran out during, with what it spent. */
export function ranOut(calls: LlmCall[]): BudgetExceededError {
  const { tokens, cost } = spent(calls);
  return new BudgetExceededError(
    `not ingested: the tenant's monthly budget ran out during this ingest (${tokens} tokens, $${cost.toFixed(4)} spent on it); upload the document again next month, or once the operator raises monthly_token_budget / monthly_cost_budget_usd`,
  );
}

/** What an ingest's calls add up to, as its document shows it (`usage`). */
export function ingestUsage(calls: LlmCall[]): IngestUsage {
  return {
    llm_calls: calls.length,
    embedding_tokens: calls
      .filter((c) => c.purpose === "embedding")
      .reduce((n, c) => n + c.input_tokens, 0),
    input_tokens: calls.reduce((n, c) => n + c.input_tokens, 0),
    output_tokens: calls.reduce((n, c) => n + c.output_tokens, 0),
    cost_usd: calls.reduce((n, c) => n + c.cost_usd, 0),
  };
}

const spent = (calls: LlmCall[]) => ({
  tokens: calls.reduce((n, c) => n + c.input_tokens + c.output_tokens, 0),
  cost: calls.reduce((n, c) => n + c.cost_usd, 0),
});
