/**
 * Evaluation (`evaluate: true`): the judge reads a branch's final answer against
 * the goal and writes an `evaluation` commit (`vm/pending.ts`); a rejected answer
 * gets a new attempt on a fork with the judge's suggestion, at most
 * `maxRounds` times; when no attempt is left running, the best judged branch
 * becomes the task's result branch and the task ends.
 *
 * The task record stays `running` from the first rejection until that choice
 * (`lifecycle.ts` leaves a rejected result branch to this hook, and `present.ts`
 * shows such a task as `running`), so a client never sees a terminal status
 * that evaluation is about to change.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { isErrorKind } from "../errors";
import { TERMINAL_STATUSES } from "../model-values";
import type { Plan } from "../plan/schema";
import type { LlmMessage } from "../ports/llm";
import type { Log } from "../ports/log";
import type { BranchRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { EvaluateInput, Evaluator, Verdict } from "../vm/evaluator-port";
import { goalText } from "../vm/goal-text";
import type { TerminalHook } from "../vm/step-deps";
import type { BranchService } from "./branches";
import type { EvaluationHook } from "./lifecycle";

/** The judge's answer (`json_schema` name `evaluation`), built by the first evaluation. */
export const EvaluationAnswer = buildOnce(() =>
  z.object({
    accept: z.boolean(),
    score: z.number().min(0).max(10),
    suggestion: z.string(),
    explanation: z.string(),
  }),
);
export type EvaluationAnswer = z.infer<ReturnType<typeof EvaluationAnswer>>;

/** Rounds of new attempts after rejections (http-api.md: at most 2). */
export const MAX_EVALUATION_ROUNDS = 2;

const JUDGE_SYSTEM = `You judge the final answer of an automated task against the task's goal.
Accept the answer when it does what the goal asks, correctly and completely, in the language and format asked for; reject it otherwise.
Score it from 0 (useless or wrong) to 10 (exactly what the goal asks).
When you reject it, the suggestion tells the planner, in one or two sentences, what a new attempt must do differently (which step to add, change or drop); when you accept it, the suggestion is "".
Answer JSON {"accept": boolean, "score": number, "suggestion": "...", "explanation": "why, in one or two sentences"}.`;

/** Cuts a value's text for a prompt. */
function clip(value: unknown, max: number): string {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 1);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars in all)` : text;
}

/** The judge's prompt: the goal with its response format, the plan and the answer. */
export function evaluationMessages(input: {
  goal: string | null;
  responseFormat: Record<string, unknown>;
  plan: Plan | null;
  finalAnswer: unknown;
}): LlmMessage[] {
  return [
    { role: "system", content: JUDGE_SYSTEM },
    {
      role: "user",
      content: `${goalText(input.goal, input.responseFormat) || "The task has no goal text: judge the answer on its own."}

The plan that produced the answer:
${clip(input.plan ?? [], 6000)}

The final answer:
${clip(input.finalAnswer, 12_000)}`,
    },
  ];
}

/** The judge over the LLM session: the `eval` model, schema `evaluation`. */
export function createEvaluator(): Evaluator {
  return {
    async judge({ branch, llm, finalAnswer }: EvaluateInput): Promise<Verdict> {
      const answer = await llm.json({
        purpose: "evaluation",
        role: "eval",
        schemaName: "evaluation",
        schema: EvaluationAnswer(),
        messages: evaluationMessages({
          goal: branch.config.goal,
          responseFormat: branch.config.response_format,
          plan: branch.plan,
          finalAnswer,
        }),
      });
      return {
        accept: answer.accept,
        score: Math.round(answer.score * 10) / 10,
        suggestion: answer.accept ? "" : answer.suggestion.trim(),
        explanation: answer.explanation,
      };
    },
  };
}

export interface EvaluationHookDeps {
  store: TaskStore;
  branches: BranchService;
  log: Log;
  maxRounds?: number;
  /**
   * The lifecycle's terminal hook. When the task ends on a branch other than the
   * one that just ended (the best answer came from an earlier round), it runs for
   * that branch, so that hooks acting on the result branch (outgoing webhooks,
   * quotas) see the task end.
   */
  onTaskEnd?: TerminalHook;
}

/** The branches whose answers compete: the result branch and the evaluation rounds. */
function inRounds(branch: BranchRecord, resultBranch: string): boolean {
  return branch.name === resultBranch || (branch.config.evaluation_round ?? 0) > 0;
}

/**
 * The best judged branch: the highest score, then an accepted answer, then the
 * earlier round. Branches that ended without an answer do not compete.
 */
export function bestJudged(branches: BranchRecord[]): BranchRecord | null {
  const completed = branches.filter((b) => b.status === "completed");
  completed.sort(
    (a, b) =>
      (b.verdict?.score ?? -1) - (a.verdict?.score ?? -1) ||
      Number(b.verdict?.accept ?? false) - Number(a.verdict?.accept ?? false) ||
      (a.config.evaluation_round ?? 0) - (b.config.evaluation_round ?? 0),
  );
  return completed[0] ?? null;
}

/**
 * Runs when a branch ends, given the task record as the lifecycle left it: forks
 * the next round after a rejection, or, when no round is still running, promotes
 * the best judged branch (which ends the task). Forks are named `eval-{round}`,
 * so a hook that runs twice forks once.
 */
export function evaluationHook(deps: EvaluationHookDeps): EvaluationHook {
  const maxRounds = deps.maxRounds ?? MAX_EVALUATION_ROUNDS;
  return async (branch, task) => {
    if (!branch.config.evaluate) return;
    const { tenant_id: tenant, task_id: taskId } = branch;
    if (TERMINAL_STATUSES.has(task.status) || !inRounds(branch, task.branch)) return;
    const round = branch.config.evaluation_round ?? 0;
    const verdict = branch.verdict;
    if (
      branch.status === "completed" &&
      verdict &&
      !verdict.accept &&
      round < maxRounds &&
      branch.plan_commit
    ) {
      const suggestion =
        verdict.suggestion ?? "The judge rejected the answer: write a plan that answers better.";
      try {
        await deps.branches.fork(
          tenant,
          taskId,
          { from_commit: branch.plan_commit, name: `eval-${round + 1}`, suggestion },
          { evaluationRound: round + 1 },
        );
        deps.log.info("evaluation rejected an answer: new attempt", {
          tenant_id: tenant,
          task_id: taskId,
          branch: branch.name,
          round: round + 1,
        });
      } catch (error) {
        if (!isErrorKind(error, "conflict")) throw error;
      }
      return;
    }
    const rounds = (await deps.store.listBranches(tenant, taskId)).filter((b) =>
      inRounds(b, task.branch),
    );
    if (rounds.some((b) => !TERMINAL_STATUSES.has(b.status))) return;
    const best = bestJudged(rounds);
    const result = best ?? rounds.find((b) => b.name === task.branch) ?? branch;
    if (best) await deps.branches.promote(tenant, taskId, best.name);
    else {
      await deps.store.updateTask(tenant, taskId, {
        status: result.status,
        final_answer: result.final_answer ?? null,
        error: result.error,
        updated_at: result.updated_at,
      });
    }
    if (result.name !== branch.name && deps.onTaskEnd) await deps.onTaskEnd(result);
  };
}
