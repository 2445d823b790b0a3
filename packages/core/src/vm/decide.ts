/**
 * What a step does: `decide` chooses and runs its work (a cancel, an evaluation,
 * the plan or a plan update, or the instruction at the PC) and answers the draft
 * of its commit; `draftForFailure` turns a failure into the draft of an `error`
 * commit; `memberRunner` runs a parallel group's member as `decide` runs a calling.
 */
import { StackVMError } from "../errors";
import type { LlmSession } from "../llm/types";
import type { BranchRecord } from "../store/records";
import { answerSchemaOf, checkFinalAnswer } from "./answer-schema";
import { executeInstruction, findInstruction } from "./execute";
import { failedStep } from "./failed-step";
import { firstCause, whyNotRepaired } from "./first-cause";
import type { MemberRunner } from "./group-held";
import { checkOutputs } from "./output-limits";
import { type Draft, runPending } from "./pending";
import { failingSince, unreachableBound } from "./retrying";
import type { StepDeps } from "./step-deps";
import { loadReferenced, openSession, toolContext, toolsFor } from "./step-session";

/** Runs a member of a parallel group as `decide` runs a calling, with the member's own key. */
export function memberRunner(deps: StepDeps): MemberRunner {
  return (branch, instruction, idempotencyKey) => {
    // A member's session gives up on an unreachable LLM when an ordinary step would:
    // the bound runs from the branch's first failure (`vm/retrying.ts`).
    // Its call in flight shows on the group's branch, as an ordinary step's does
    // (members running at once show the one whose attempt began last).
    const giveUpAt = failingSince(branch, deps.clock.now()) + unreachableBound(deps);
    const { session, watch } = openSession(deps, branch, instruction.seq_no, giveUpAt);
    const execution = (async () => {
      if (instruction.type !== "calling" || branch.plan === null) {
        throw new StackVMError("internal", "bad_member", "a group member must be a calling");
      }
      const called = instruction.parameters.tool_name;
      const { tools, allowed } = await toolsFor(deps, branch, called);
      return executeInstruction({
        plan: branch.plan,
        instruction,
        variables: await loadReferenced(deps, branch, instruction.parameters),
        tools,
        allowed,
        toolContext: { ...toolContext(deps, branch, session), idempotencyKey },
        llm: session,
      });
    })();
    return { execution, calls: () => session.calls, settled: () => watch.settled() };
  };
}

/** Chooses and runs the work of this step. Throws for anything that is not a success. */
export async function decide(
  deps: StepDeps,
  branch: BranchRecord,
  session: LlmSession,
): Promise<Draft> {
  const base = { error: null, pending_after: null, updates_after: branch.updates };
  if (branch.cancel_requested) {
    return {
      ...base,
      type: "cancel",
      seq_no: branch.pc,
      instruction: null,
      inputs: null,
      outputs: {},
      pc_after: branch.pc,
      status_after: "cancelled",
    };
  }
  // A branch that has its answer is judged even when its step budget is spent.
  if (branch.pending?.kind === "evaluate") {
    return runPending(deps, branch, branch.pending, session, deps.tools, new Set());
  }
  const max = branch.config.budget.max_steps;
  if (branch.usage.steps >= max) {
    return {
      ...base,
      type: "error",
      seq_no: branch.pc,
      instruction: null,
      inputs: null,
      outputs: {},
      pc_after: branch.pc,
      status_after: "failed",
      error: {
        code: "budget_exceeded",
        message: `max_steps budget spent: ${branch.usage.steps} of ${max} steps used`,
      },
    };
  }
  if (branch.head === null || branch.pending) {
    const { tools, allowed } = await toolsFor(deps, branch, null);
    return runPending(deps, branch, branch.pending ?? { kind: "plan" }, session, tools, allowed);
  }
  if (branch.pc === null || branch.plan === null) {
    throw new StackVMError("internal", "no_pc", "the branch is running but has no plan or PC");
  }
  const instruction = findInstruction(branch.plan, branch.pc);
  // Only a calling reads tools: assign and jmp steps stay one read.
  const { tools, allowed } =
    instruction.type === "calling"
      ? await toolsFor(deps, branch, instruction.parameters.tool_name)
      : { tools: deps.tools, allowed: new Set<string>() };
  const variables = await loadReferenced(deps, branch, instruction.parameters);
  const execution = await executeInstruction({
    plan: branch.plan,
    instruction,
    variables,
    tools,
    allowed,
    toolContext: toolContext(deps, branch, session),
    llm: session,
  });
  checkOutputs(execution.outputs);
  const completed = execution.completed;
  // A task with an answer schema ends only with an answer that validates (answer-schema.ts).
  const answerSchema = completed ? answerSchemaOf(branch.config.response_format) : undefined;
  if (answerSchema) {
    execution.outputs.final_answer = await checkFinalAnswer(
      execution.outputs.final_answer,
      answerSchema,
    );
  }
  const pastEnd = !completed && execution.pcAfter === null;
  // An adaptive plan that ran out asks the planner for what comes next: a plan update.
  const growing = pastEnd && branch.config.namespace.planning === "adaptive";
  const ranPastEnd = pastEnd && !growing;
  // With `evaluate`, the answer is judged before the branch ends: one more step.
  const judging = completed && branch.config.evaluate && deps.evaluator !== undefined;
  return {
    ...base,
    ...(judging ? { pending_after: { kind: "evaluate" } } : {}),
    ...(growing
      ? {
          pending_after: {
            kind: "replan",
            reason: "adaptive",
            suggestion: `the plan ran out after seq_no ${instruction.seq_no} without setting final_answer: write the next instruction or few from the results so far`,
          },
        }
      : {}),
    type: "step",
    seq_no: instruction.seq_no,
    instruction,
    inputs: execution.inputs,
    outputs: execution.outputs,
    pc_after: completed ? null : execution.pcAfter,
    status_after: completed && !judging ? "completed" : ranPastEnd ? "failed" : "running",
    ...(ranPastEnd
      ? {
          error: {
            code: "no_final_answer",
            message: `execution ran past the end of the plan (after seq_no ${instruction.seq_no}) without setting final_answer`,
          },
        }
      : {}),
    ...(completed ? { final_answer: execution.outputs.final_answer } : {}),
    ...(execution.details ? { details: execution.details } : {}),
  };
}

/**
 * A failed step: transient failures go back to the queue (rethrown); anything else
 * becomes an `error` commit, followed by a plan update when one can run and help
 * (`vm/first-cause.ts`), or the end of the branch with its first cause.
 */
export function draftForFailure(deps: StepDeps, branch: BranchRecord, error: unknown): Draft {
  const decision = failedStep(error);
  if (decision.does === "retry") throw error;
  const planning = branch.head === null || branch.pending !== null;
  const failure = { code: decision.code, message: decision.message, seq_no: branch.pc };
  const why = planning
    ? null
    : !decision.replan
      ? "no plan update was tried: a plan cannot change this failure"
      : whyNotRepaired(decision.code, branch, deps);
  const canReplan = !planning && why === null;
  // A plan update that failed after a step's error: the step's error is the first cause.
  const repairing = branch.pending?.kind === "replan" ? branch.pending.error : undefined;
  const message = repairing
    ? firstCause(repairing, `then the plan update failed: [${decision.code}] ${decision.message}`)
    : why === null
      ? decision.message
      : firstCause(failure, why);
  const details = (error as StackVMError).details;
  return {
    type: "error",
    seq_no: branch.pc,
    instruction: branch.plan?.find((i) => i.seq_no === branch.pc) ?? null,
    inputs: null,
    outputs: {},
    pc_after: branch.pc,
    status_after: canReplan ? "running" : "failed",
    error: { code: decision.code, message },
    pending_after: canReplan
      ? { kind: "replan", reason: "error", suggestion: decision.message, error: failure }
      : null,
    updates_after: branch.updates,
    ...(details === undefined ? {} : { details: { error_details: details } }),
  };
}
