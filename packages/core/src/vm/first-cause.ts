/**
 * The first cause of a failed branch. A step that fails is followed by a plan update
 * when one can run and can help; when the branch ends instead, its error leads with
 * the step that failed (its code and message) and then says why it was not repaired.
 * The branch's `error` is this text, so the task, the task list, the console's
 * banner, the CLI and the outgoing webhook all read the same first cause, not the
 * failure of the plan update one commit later.
 */
import type { BranchRecord } from "../store/records";

/** A step's failure as the branch records it. */
export interface StepFailure {
  code: string;
  message: string;
  seq_no: number | null;
}

/**
 * Codes whose failure a plan update cannot mend: the LLM's budget is spent or it
 * cannot be reached (the planner needs it too), or no LLM is configured at all.
 */
const NOT_REPAIRABLE = new Set(["budget_exceeded", "llm_unreachable", "llm_not_configured"]);

/** Why a failed step is not followed by a plan update; null when one should run. */
export function whyNotRepaired(
  code: string,
  branch: Pick<BranchRecord, "updates"> & {
    config?: Pick<BranchRecord["config"], "replan"> & {
      namespace?: Pick<BranchRecord["config"]["namespace"], "name" | "replan">;
    };
  },
  limits: { maxPlanUpdates: number; llmConfigured?: boolean },
): string | null {
  if (branch.config?.replan === false) {
    return "no plan update was tried: plan repair is off for this task (replan: false)";
  }
  const namespace = branch.config?.namespace;
  if (branch.config?.replan === undefined && namespace?.replan === false) {
    return `no plan update was tried: plan repair is off for namespace ${namespace.name} (replan: false; a task's "replan": true turns it on)`;
  }
  if (code === "llm_not_configured" || limits.llmConfigured === false) {
    return "no plan update was tried: no LLM is configured to rewrite the plan";
  }
  if (NOT_REPAIRABLE.has(code)) {
    return "no plan update was tried: the planner needs the same LLM";
  }
  if (branch.updates >= limits.maxPlanUpdates) {
    return `no plan update left (${branch.updates} of ${limits.maxPlanUpdates} used)`;
  }
  return null;
}

/** `step 3 failed: [division_by_zero] cannot divide by zero`. */
export function stepFailed(failure: StepFailure): string {
  const where = failure.seq_no === null ? "a step" : `step ${failure.seq_no}`;
  return `${where} failed: [${failure.code}] ${failure.message}`;
}

/**
 * The branch's error: the first cause, then why it stayed, as two sentences.
 *
 * @example
 * firstCause({ code: "arithmetic_error", message: "division by zero", seq_no: 3 },
 *   "no plan update was tried: no LLM is configured to rewrite the plan")
 * // "step 3 failed: [arithmetic_error] division by zero. No plan update was tried: …"
 */
export function firstCause(failure: StepFailure, why: string): string {
  const cause = stepFailed(failure).trimEnd();
  const end = /[.!?]$/.test(cause) ? "" : ".";
  const then = why.charAt(0).toUpperCase() + why.slice(1);
  return `${cause}${end} ${then}${/[.!?]$/.test(then) ? "" : "."}`;
}
