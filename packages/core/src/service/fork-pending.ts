/**
 * The work a fork's first step does, from what the fork asked for
 * (`fork-input.ts`), checked against the plan checks every run passes. Apart
 * from the request's schema, which a worker's cold start does not build: the
 * worker forks a task when an evaluation rejects its answer.
 */
import { ValidationError } from "../errors";
import type { PlanCompat } from "../plan/compat-mode";
import type { PendingWork } from "../store/records";
import type { StoredState } from "../vm/state";
import type { ForkInput } from "./fork-input";
import type { PlanChecks } from "./plan-checks";

/** Where the fork is made: its task, the namespace and plan mode its steps run in. */
export interface ForkSite {
  tenant: string;
  taskId: string;
  namespace: string;
  compat: PlanCompat;
  /** A new attempt after a rejected answer (`evaluation.ts`), not a client's fork. */
  evaluation: boolean;
}

/**
 * The work a fork's first step does before it runs on (null: it runs on from the
 * commit as it is); 422 when the change does not check or there is nothing to run.
 */
export async function forkPending(
  checks: Pick<PlanChecks, "validate">,
  input: ForkInput,
  state: StoredState,
  site: ForkSite,
): Promise<PendingWork | null> {
  const { tenant, taskId, namespace, compat } = site;
  const source = state.commit;
  const names = [...Object.keys(state.locations), ...Object.keys(state.held)];
  if (input.suggestion !== undefined) {
    const reason = site.evaluation ? "evaluation" : "fork";
    return { kind: "replan", reason, suggestion: input.suggestion };
  }
  if (input.plan !== undefined) {
    const validated = await checks.validate(tenant, namespace, input.plan, names, compat);
    return { kind: "replace_plan", plan: validated };
  }
  if (input.step !== undefined) {
    const current = state.plan ?? [];
    if (!current.some((i) => i.seq_no === input.step!.seq_no)) {
      throw new ValidationError(
        "unknown_seq_no",
        `the plan at ${source.commit_id} has no instruction with seq_no ${input.step.seq_no}`,
      );
    }
    // The plan language's schemas load with the first fork that replaces a step (a worker's start has none).
    const { Instruction } = await import("../plan/schema");
    const parsed = Instruction.safeParse(input.step.instruction);
    if (!parsed.success || parsed.data.seq_no !== input.step.seq_no) {
      throw new ValidationError(
        "invalid_instruction",
        `step.instruction must be an instruction of the plan language with seq_no ${input.step.seq_no}`,
        parsed.success ? undefined : parsed.error.issues,
      );
    }
    const replaced = current.map((i) => (i.seq_no === input.step!.seq_no ? parsed.data : i));
    await checks.validate(tenant, namespace, replaced, names, compat);
    return { kind: "replace_step", seq_no: input.step.seq_no, instruction: parsed.data };
  }
  if (state.pc === null || state.plan === null) {
    throw new ValidationError(
      "nothing_to_run",
      `commit ${source.commit_id} ended its branch, so a fork of it has no step to run: fork it with a suggestion or a plan to run more, fork an earlier commit to run its steps again, or run the task again from its goal (POST /v1/tasks/${taskId}/retry with {"from": "start"})`,
    );
  }
  return null;
}
