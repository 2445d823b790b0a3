/**
 * A parallel group's member results (`vm/group.ts`): each member runs in its own
 * invocation and holds its result apart (`store/held-result-store.ts`) until the
 * group is complete and the join commits the results one by one, in plan order.
 */
import type { StackVMError } from "../errors";
import { digest } from "../ids";
import type { LlmCall } from "../model";
import type { Instruction } from "../plan/schema";
import type { HeldValue } from "../store/held-result-store";
import type { BranchRecord, GroupRecord } from "../store/records";
import { ATTRIBUTE_LIMIT, spillRecord, spillValue, taskBlobPrefix } from "../store/values";
import type { Execution } from "./execute";
import { findInstruction } from "./execute";
import { failedStep } from "./failed-step";
import { checkOutputs } from "./output-limits";
import { failingSince, unreachableBound, unreachableFailure } from "./retrying";
import type { StepDeps } from "./step-deps";

/**
 * Runs one member's instruction (the step's own executor, with the member's
 * idempotency key); `calls` lists its LLM calls so far, also after a failure;
 * `settled` resolves once what it wrote of its call in flight is written.
 */
export type MemberRunner = (
  branch: BranchRecord,
  instruction: Instruction,
  idempotencyKey: string,
) => { execution: Promise<Execution>; calls: () => LlmCall[]; settled: () => Promise<void> };

/** Runs a member's instruction; transient failures are thrown (the message comes back). */
export async function runHeld(
  deps: StepDeps,
  branch: BranchRecord,
  seq: number,
  runner: MemberRunner,
): Promise<HeldValue> {
  const group = branch.group as GroupRecord;
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const started = deps.clock.now();
  const instruction = findInstruction(branch.plan ?? [], seq);
  const key = digest(branch.task_id, branch.name, group.base, "member", seq);
  const base = { seq_no: seq, base: group.base, started_at: new Date(started).toISOString() };
  const ran = runner(branch, instruction, key);
  try {
    // The member's "no call in flight" is written before its result is held.
    const execution = await ran.execution.finally(() => ran.settled());
    checkOutputs(execution.outputs);
    const finished = deps.clock.now();
    return {
      ...base,
      inputs: await spillValue(execution.inputs, deps.blobs, prefix, ATTRIBUTE_LIMIT),
      outputs: await spillRecord(execution.outputs, deps.blobs, prefix),
      pc_after: execution.pcAfter,
      details: execution.details ?? null,
      error: null,
      llm_calls: ran.calls(),
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - started,
    };
  } catch (thrown) {
    // A member is bound as an ordinary step is: an LLM that gives no answer ends it
    // after STACKVM_LLM_UNREACHABLE_SECONDS, and the calls of a failed try are kept.
    const now = deps.clock.now();
    const error =
      unreachableFailure(failingSince(branch, started), thrown, now, unreachableBound(deps)) ??
      thrown;
    const failed = failedStep(error, ran.calls());
    if (failed.does === "retry") throw error;
    const e = error as Partial<StackVMError>;
    const finished = deps.clock.now();
    return {
      ...base,
      inputs: null,
      outputs: {},
      pc_after: seq,
      details: null,
      error: {
        kind: e.kind ?? "step",
        code: failed.code,
        message: failed.message,
        ...(e.details === undefined ? {} : { details: e.details }),
      },
      llm_calls: ran.calls(),
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - started,
    };
  }
}
