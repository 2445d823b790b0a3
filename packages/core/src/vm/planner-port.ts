/**
 * The planner as the step function sees it: writes a plan for a goal, or rewrites
 * the rest of a plan from the PC. The implementation lives in `../planning`.
 */
import type { LlmSession } from "../llm/types";
import type { Plan } from "../plan/schema";
import type { BranchRecord } from "../store/records";
import type { Tool } from "../tools/tool";

export interface PlanResult {
  plan: Plan;
  reasoning: string;
  /** Extra facts for the commit (attempts, problems repaired, template used). */
  details?: Record<string, unknown>;
}

export interface PlanInput {
  branch: BranchRecord;
  llm: LlmSession;
  tools: ReadonlyMap<string, Tool>;
  allowed: ReadonlySet<string>;
}

export interface ReplanInput extends PlanInput {
  plan: Plan;
  pc: number | null;
  /** Variables that exist at the PC (values may be summarized). */
  variables: Record<string, unknown>;
  suggestion: string;
  /** The error that caused the update, when an error did. */
  error?: { code: string; message: string; seq_no: number | null };
}

export interface Planner {
  plan(input: PlanInput): Promise<PlanResult>;
  replan(input: ReplanInput): Promise<PlanResult & { pc: number }>;
}
