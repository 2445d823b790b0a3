/**
 * Work a branch does before (or instead of) its next instruction: write the first
 * plan, rewrite the plan from the PC after an error or for a fork's suggestion, or
 * swap in a plan or one instruction given by the client, or have the judge read
 * the final answer (`evaluate`).
 */
import type { LlmSession } from "../llm/types";
import type { Status } from "../model";
import type { Plan } from "../plan/schema";
import type { BranchRecord, CommitRecord, PendingWork } from "../store/records";
import { loadValue, taskBlobPrefix } from "../store/values";
import { prepareTools } from "../tools/prepare";
import type { Tool } from "../tools/tool";
import { failedStep } from "./failed-step";
import type { StepDeps } from "./step-deps";
import { loadVariables } from "./variables";

/** What one step decided, before it is written. */
export interface Draft {
  type: CommitRecord["type"];
  seq_no: number | null;
  instruction: unknown;
  inputs: unknown;
  outputs: Record<string, unknown>;
  /** The outputs are already in their stored form (the task's inputs, as stored at its start). */
  outputs_stored?: true;
  pc_after: number | null;
  plan?: Plan;
  error: { code: string; message: string } | null;
  status_after: Status;
  pending_after: PendingWork | null;
  updates_after: number;
  final_answer?: unknown;
  details?: Record<string, unknown>;
}

/** The reasoning of a plan commit whose plan the client gave: a retry from the start runs it again. */
export const SUBMITTED_PLAN = "submitted by the client";

export async function runPending(
  deps: StepDeps,
  branch: BranchRecord,
  pending: PendingWork,
  session: LlmSession,
  tools: ReadonlyMap<string, Tool>,
  allowed: ReadonlySet<string>,
): Promise<Draft> {
  const base = {
    error: null,
    pending_after: null,
    updates_after: branch.updates,
    seq_no: branch.pc,
  };
  switch (pending.kind) {
    case "plan": {
      const given = branch.plan;
      // The planner checks the plans it writes against the tools' inputs.
      if (!given) await prepareTools(tools.values());
      const result = given
        ? { plan: given, reasoning: SUBMITTED_PLAN, details: undefined }
        : await deps.planner.plan({ branch, llm: session, tools, allowed });
      return {
        ...base,
        type: "plan",
        seq_no: null,
        instruction: null,
        inputs: branch.config.goal === null ? null : { goal: branch.config.goal },
        outputs: branch.config.inputs,
        outputs_stored: true,
        pc_after: result.plan[0]?.seq_no ?? null,
        plan: result.plan,
        status_after: "running",
        details: { reasoning: result.reasoning, ...(result.details ?? {}) },
      };
    }
    case "replan": {
      const variables = await summarizeVariables(deps, branch);
      await prepareTools(tools.values());
      const result = await deps.planner.replan({
        branch,
        llm: session,
        tools,
        allowed,
        plan: branch.plan ?? [],
        pc: branch.pc,
        variables,
        suggestion: pending.suggestion,
        ...(pending.error ? { error: pending.error } : {}),
      });
      return {
        ...base,
        type: "plan_update",
        instruction: null,
        inputs: { suggestion: pending.suggestion, reason: pending.reason },
        outputs: {},
        pc_after: result.pc,
        plan: result.plan,
        status_after: "running",
        updates_after: pending.reason === "error" ? branch.updates + 1 : branch.updates,
        details: { reasoning: result.reasoning, ...(result.details ?? {}) },
      };
    }
    case "replace_plan": {
      const pc =
        branch.pc !== null && pending.plan.some((i) => i.seq_no === branch.pc)
          ? branch.pc
          : (pending.plan[0]?.seq_no ?? null);
      return {
        ...base,
        type: "plan_update",
        instruction: null,
        inputs: { replaced: "plan" },
        outputs: {},
        pc_after: pc,
        plan: pending.plan,
        status_after: "running",
      };
    }
    case "replace_step": {
      const plan = (branch.plan ?? []).map((i) =>
        i.seq_no === pending.seq_no ? pending.instruction : i,
      );
      return {
        ...base,
        type: "plan_update",
        instruction: pending.instruction,
        inputs: { replaced: "step", seq_no: pending.seq_no },
        outputs: {},
        pc_after: branch.pc,
        plan,
        status_after: "running",
      };
    }
    case "evaluate":
      return evaluate(deps, branch, session);
  }
}

/**
 * The `evaluation` commit: the judge's verdict on the final answer, which it does
 * not change. A judge that cannot answer (a refusal, a spent budget) leaves the
 * branch completed without a verdict rather than failing an answer that exists;
 * transient failures still go back to the queue.
 */
async function evaluate(deps: StepDeps, branch: BranchRecord, session: LlmSession): Promise<Draft> {
  const base = {
    type: "evaluation" as const,
    seq_no: null,
    instruction: null,
    inputs: null,
    outputs: {},
    pc_after: branch.pc,
    status_after: "completed" as const,
    pending_after: null,
    updates_after: branch.updates,
  };
  const round = branch.config.evaluation_round ?? 0;
  if (!deps.evaluator) {
    return { ...base, error: null, details: { verdict: null, round, skipped: "no judge" } };
  }
  try {
    const finalAnswer = await loadValue(
      branch.final_answer,
      deps.blobs,
      taskBlobPrefix(branch.tenant_id, branch.task_id),
    );
    const v = await deps.evaluator.judge({ branch, llm: session, finalAnswer });
    return {
      ...base,
      error: null,
      details: {
        verdict: { accept: v.accept, score: v.score, suggestion: v.suggestion || null },
        explanation: v.explanation,
        round,
      },
    };
  } catch (error) {
    // A failure the queue retries goes up to the step, which carries its calls.
    const failed = failedStep(error);
    if (failed.does === "retry") throw error;
    return {
      ...base,
      error: {
        code: failed.code,
        message: `the answer could not be judged: ${failed.message}`,
      },
      details: { verdict: null, round },
    };
  }
}

/** The variables at the head, large ones loaded and cut to a preview for the planner. */
async function summarizeVariables(
  deps: StepDeps,
  branch: BranchRecord,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const values = await loadVariables(deps.store, deps.blobs, branch);
  for (const [name, value] of Object.entries(values)) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    out[name] = text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} chars)` : value;
  }
  return out;
}
