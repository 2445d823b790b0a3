/**
 * The LLM judge: a case's answer graded against its rubric by the stack's own
 * model, as a task of its own (one `llm_generate` asked for `pass` and
 * `reason`). Its calls and cost are reported beside the case's, not in them.
 * The material goes in as an input, so an answer holding `${…}` is never read
 * as a reference.
 */
import { type ApiClient, describe } from "./api";
import type { Outcome, Verdict } from "./checkers";
import type { EvalCase } from "./dataset";
import type { CaseResult } from "./metrics";
import { backoff } from "./poll";
import { judgeMarker } from "./scripted";

export interface JudgeOptions {
  api: ApiClient;
  namespace: string;
  timeoutMs: number;
  pollMs: number;
}

/** The judge's plan: grade the material, answer `{pass, reason}`. */
export const JUDGE_PLAN = [
  {
    seq_no: 0,
    type: "calling",
    parameters: {
      tool_name: "llm_generate",
      tool_params: {
        prompt:
          "You grade an answer to a question against a rubric. Set pass to true only when the answer meets every point of the rubric; reason says in one sentence why.",
        context: "${material}",
      },
      output_vars: ["pass", "reason"],
    },
  },
  {
    seq_no: 1,
    type: "assign",
    parameters: { final_answer: { pass: "${pass}", reason: "${reason}" } },
  },
];

/**
 * Grades a finished case with its rubric. A task that did not complete is
 * wrong without asking; a judge that fails says so in the reason.
 */
export async function judge(
  c: EvalCase,
  rubric: string,
  outcome: Outcome,
  options: JudgeOptions,
): Promise<Verdict & { usage: NonNullable<CaseResult["judge"]> }> {
  const none = { task_id: null, llm_calls: 0, tokens: 0, cost_usd: 0 };
  if (outcome.status !== "completed")
    return {
      right: false,
      reason: `the task ended ${outcome.status}: ${String(outcome.error ?? "")}`,
      usage: none,
    };
  const created = await options.api.call("POST", "/v1/tasks", {
    goal: `${judgeMarker(c.id)} Grade an answer against a rubric.`,
    plan: JUDGE_PLAN,
    inputs: { material: { question: c.goal, rubric, answer: outcome.final_answer } },
    namespace: options.namespace,
    metadata: { eval_judge_of: c.id },
  });
  if (created.status !== 202) {
    return {
      right: false,
      reason: `the judge could not start: ${describe(created.body)}`,
      usage: none,
    };
  }
  const taskId = created.body.task_id as string;
  const deadline = Date.now() + options.timeoutMs;
  let task: any;
  const pause = backoff(options.pollMs);
  for (;;) {
    task = await options.api.expect("GET", `/v1/tasks/${taskId}`, undefined, [200]);
    if (["completed", "failed", "cancelled"].includes(task.status)) break;
    if (Date.now() > deadline) {
      await options.api.call("POST", `/v1/tasks/${taskId}/cancel`);
      break;
    }
    await pause();
  }
  const usage = {
    task_id: taskId,
    llm_calls: task.usage?.llm_calls ?? 0,
    tokens: (task.usage?.input_tokens ?? 0) + (task.usage?.output_tokens ?? 0),
    cost_usd: task.usage?.cost_usd ?? 0,
  };
  if (task.status !== "completed") {
    return {
      right: false,
      reason: `the judge's task ended ${task.status}: ${task.error ?? ""}`,
      usage,
    };
  }
  const verdict = task.final_answer as { pass?: unknown; reason?: unknown };
  const pass = verdict?.pass === true || /^(true|yes|pass)$/i.test(String(verdict?.pass).trim());
  return { right: pass, reason: `judge: ${String(verdict?.reason ?? "").slice(0, 200)}`, usage };
}
