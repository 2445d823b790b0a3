/**
 * The model's plain values that the step path reads: a task's statuses, the
 * ones it ends in, and a usage of nothing. They live apart from `model.ts`,
 * which builds every schema of the HTTP API when it loads, so that a worker's
 * cold start reaches them without building those schemas (docs/deploy.md,
 * "Cold starts"). `model.ts` re-exports them beside its schemas.
 */

/** Every status of a task or a branch, in the order of its life. */
export const STATUSES = [
  "queued",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
] as const;

/** The statuses a task or a branch ends in. */
export const TERMINAL_STATUSES: ReadonlySet<(typeof STATUSES)[number]> = new Set([
  "completed",
  "failed",
  "cancelled",
]);

/** A usage of nothing: no step, no LLM call, no token, no cost. */
export const ZERO_USAGE = {
  steps: 0,
  llm_calls: 0,
  input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
};
