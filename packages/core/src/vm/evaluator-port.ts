/**
 * The judge as the step function sees it: reads a branch's final answer against
 * the goal and gives a verdict. The implementation lives in `../service/evaluation`.
 */
import type { LlmSession } from "../llm/types";
import type { BranchRecord } from "../store/records";

/** What the judge decided about one final answer. */
export interface Verdict {
  accept: boolean;
  /** 0 (useless) to 10 (exactly what the goal asks). */
  score: number;
  /** What a new attempt should do differently (empty when accepted). */
  suggestion: string;
  explanation: string;
}

export interface EvaluateInput {
  branch: BranchRecord;
  llm: LlmSession;
  /** The branch's final answer, loaded whole. */
  finalAnswer: unknown;
}

export interface Evaluator {
  judge(input: EvaluateInput): Promise<Verdict>;
}
