/**
 * The step protocol: run the instruction after `head` on a branch, commit it, move
 * the head, enqueue the next step. One read (the branch) and two writes (the commit,
 * the head) on the common path.
 *
 * Delivery is at least once, so every path is safe to run twice:
 * - a message whose `head` is not the branch head is a duplicate (one read), except
 *   the message for the head's parent, which re-enqueues the head's successor: a
 *   crash between the head move and the enqueue does not stall the branch;
 * - the commit key is derived from (task, branch, parent): a racing or repeated step
 *   finds the commit written (`ConflictError`) and moves the head to *that* commit,
 *   which also repairs a crash between the commit write and the head move;
 * - the head moves only from the expected parent (a conditional update).
 */
import { classifyFailure, isErrorKind, StackVMError } from "../errors";
import { digest } from "../ids";
import { llmTracePrefix } from "../llm/trace";
import type { LlmBudget, LlmSession } from "../llm/types";
import { type LlmCall, type Status, TERMINAL_STATUSES } from "../model";
import { findReferences } from "../plan/references";
import type { Changes } from "../ports/item-store";
import { commitId, commitSk, sweepIndex } from "../store/keys";
import type { BranchRecord, CommitRecord } from "../store/records";
import { spillRecord, spillValue, taskBlobPrefix } from "../store/values";
import { type Tool, type ToolContext, WaitRequest } from "../tools/tool";
import { executeInstruction, findInstruction } from "./execute";
import { nextChain } from "./fenwick";
import { firstCause, whyNotRepaired } from "./first-cause";
import {
  groupExit,
  joinContinues,
  joinedAt,
  type MemberRunner,
  runGroup,
  runMember,
  takeHeld,
} from "./group";
import { watchCalls } from "./in-flight";
import { branchGroupId, type StepMessage } from "./message";
import { checkOutputs } from "./output-limits";
import { type Draft, runPending } from "./pending";
import { boundCommit, isStoreRefusal, refusalFailure } from "./record-bounds";
import {
  carriedCalls,
  carryCalls,
  failingSince,
  unreachableBound,
  unreachableFailure,
} from "./retrying";
import { countsAsStep } from "./step-count";
import type { StepDeps } from "./step-deps";
import { loadVariables, nextWindow } from "./variables";
import { enterWait, holdWhileWaiting } from "./wait";

export type StepOutcome =
  | { outcome: "committed" | "repaired"; commit: string; status: Status }
  | { outcome: "duplicate" }
  | { outcome: "resumed"; head: string }
  /** The branch waits (`vm/wait.ts`): nothing was committed. */
  | { outcome: "waiting" }
  /** A parallel group began or went on (`vm/group.ts`); a member's result was held. */
  | { outcome: "grouped" | "member" }
  | { outcome: "gone" };

/** A window or input larger than this is stored whole in the blob store. */
const ATTRIBUTE_LIMIT = 128 * 1024;

export async function runStep(
  deps: StepDeps,
  message: StepMessage,
  /** The queue's id of the message, carried into the step's log lines. */
  messageId?: string,
  /** The branch as the previous commit of a group's join left it (no read needed). */
  known?: BranchRecord,
): Promise<StepOutcome> {
  const { tenant_id: tenant, task_id: taskId, branch: name } = message;
  if (message.member !== undefined) {
    const join = (base: string) =>
      runStep(
        deps,
        { v: 1, kind: "step", tenant_id: tenant, task_id: taskId, branch: name, head: base },
        messageId,
      );
    return runMember(deps, { ...message, member: message.member }, memberRunner(deps), join);
  }
  const branch = known ?? (await deps.store.getBranch(tenant, taskId, name));
  if (!branch) return { outcome: "gone" };
  if (branch.head !== message.head) {
    // The message for the head's parent came back: its worker may have died after the
    // head moved. A running branch lost its next enqueue: resume it. An ended branch
    // may have missed its terminal hooks (task status, outgoing webhook, quotas),
    // which are safe to repeat: run them again.
    // The join of a parallel group died between two member commits, or after its
    // last one (`vm/group.ts`): go on from the head, or resume as above.
    const join = joinedAt(branch, message.head);
    if (join === "go_on") return runStep(deps, { ...message, head: branch.head }, messageId);
    if (branch.head && (message.head === branch.prev_head || join === "resume")) {
      if (!TERMINAL_STATUSES.has(branch.status)) {
        await enqueueNext(deps, branch, branch.head);
        return { outcome: "resumed", head: branch.head };
      }
      if (deps.onTerminal) await deps.onTerminal(branch);
    }
    return { outcome: "duplicate" };
  }
  if (TERMINAL_STATUSES.has(branch.status)) return { outcome: "duplicate" };
  // A branch queued for a running slot starts when one frees (`RunningSlots`), not here.
  if (branch.status === "queued") return { outcome: "duplicate" };
  if (branch.status === "waiting") {
    const held = await holdWhileWaiting(deps, branch);
    if (held) return held;
  }

  // A parallel group (`vm/group.ts`): commit a member's held result, or fan out.
  const held = await takeHeld(deps, branch);
  if (!held) {
    const join = (base: string) => runStep(deps, { ...message, head: base }, messageId);
    const grouped = await runGroup(deps, branch, memberRunner(deps), join);
    if (grouped) return grouped;
  }

  const started = deps.clock.now();
  // An unreachable LLM is retried inside the step only until its bound (`vm/retrying.ts`).
  const bound = unreachableBound(deps);
  const since = failingSince(branch, started);
  // The call in flight is written on the branch while the model thinks (`vm/in-flight.ts`).
  const watch = watchCalls({ store: deps.store, now: deps.clock.now }, branch);
  const session = deps.llm(
    sessionBudget(deps, branch),
    tracePrefix(branch),
    since + bound,
    tokensFor(deps, branch, branch.pc),
    watch,
  );
  let draft: Draft;
  try {
    if (held?.error) throw held.error;
    draft = held ? held.draft : await decide(deps, branch, session);
  } catch (error) {
    await watch.settled();
    if (error instanceof WaitRequest) return enterWait(deps, branch, error.spec);
    const failure = unreachableFailure(since, error, deps.clock.now(), bound) ?? error;
    // A failure the queue retries takes this delivery's calls to the branch's retry record.
    if (classifyFailure(failure).action === "retry") carryCalls(failure, session.calls);
    draft = draftForFailure(deps, branch, failure);
  }
  // The last "no call in flight" is written before the commit moves the head.
  await watch.settled();
  // The calls of earlier deliveries that failed come first: every call made is in a commit.
  const calls = [...carriedCalls(branch), ...(held ? held.calls : session.calls)];
  const durationMs = held ? held.durationMs : deps.clock.now() - started;
  const commit = await buildCommit(deps, branch, draft, calls, durationMs);

  let outcome: "committed" | "repaired" = "committed";
  let written = commit;
  try {
    await deps.store.putCommit(commit);
  } catch (error) {
    if (isErrorKind(error, "conflict")) {
      const existing = await deps.store.getCommit(tenant, taskId, commit.commit_id);
      if (!existing) throw error;
      written = existing;
      outcome = "repaired";
    } else if (isStoreRefusal(error) || error instanceof TypeError) {
      // The same commit would be refused on every try (`record-bounds.ts`): the step
      // fails now, with a small error commit in its place.
      const failure = refusalFailure(error, commit);
      deps.log.warn("the store refused a step's commit: the step fails", {
        ...(messageId ? { message_id: messageId } : {}),
        tenant_id: tenant,
        task_id: taskId,
        branch: name,
        parent: branch.head,
        error: failure.message,
      });
      written = await buildCommit(
        deps,
        branch,
        draftForFailure(deps, branch, failure),
        calls,
        durationMs,
      );
      try {
        await deps.store.putCommit(written);
      } catch (again) {
        // A redelivery after the error commit was written (the worker died before the
        // head move): the store checks size before the condition, so the step commit is
        // refused again and its error commit finds its key taken. Take the one written.
        if (!isErrorKind(again, "conflict")) throw again;
        const existing = await deps.store.getCommit(tenant, taskId, written.commit_id);
        if (!existing) throw again;
        written = existing;
        outcome = "repaired";
      }
    } else {
      throw error;
    }
  }
  const moved = await moveHead(deps, branch, written);
  if (!moved) return { outcome: "duplicate" };
  deps.onCommit?.(written, moved);
  deps.log.info("step committed", {
    ...(messageId ? { message_id: messageId } : {}),
    tenant_id: tenant,
    task_id: taskId,
    branch: name,
    parent: branch.head,
    commit: written.commit_id,
    type: written.type,
    status: written.status_after,
    ...(written.error ? { error: written.error } : {}),
  });
  if (written.parent_id === null && deps.onStart) await deps.onStart(moved);
  if (branch.waiting && written.status_after === "running" && deps.onResume) {
    await deps.onResume(moved);
  }
  if (held && joinContinues(moved)) {
    // The next member's result is held too: commit it in this invocation (`vm/group.ts`).
    return runStep(deps, { ...message, head: written.commit_id }, messageId, moved);
  }
  if (written.status_after === "running") {
    await enqueueNext(deps, moved, written.commit_id);
  } else if (deps.onTerminal) {
    await deps.onTerminal(moved);
  }
  return { outcome, commit: written.commit_id, status: written.status_after };
}

/** Runs a member of a parallel group as `decide` runs a calling, with the member's own key. */
function memberRunner(deps: StepDeps): MemberRunner {
  return (branch, instruction, idempotencyKey) => {
    // A member's session gives up on an unreachable LLM when an ordinary step would:
    // the bound runs from the branch's first failure (`vm/retrying.ts`).
    // Its call in flight shows on the group's branch, as an ordinary step's does
    // (members running at once show the one whose attempt began last).
    const watch = watchCalls({ store: deps.store, now: deps.clock.now }, branch);
    const session = deps.llm(
      sessionBudget(deps, branch),
      tracePrefix(branch),
      failingSince(branch, deps.clock.now()) + unreachableBound(deps),
      tokensFor(deps, branch, instruction.seq_no),
      watch,
    );
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

/**
 * The sink of the text this step's LLM calls write, for an events stream that
 * watches (`service/token-relay.ts`): labelled with the instruction, and whether
 * it writes the final answer.
 */
function tokensFor(deps: StepDeps, branch: BranchRecord, seqNo: number | null) {
  if (!deps.tokens) return undefined;
  const instruction = branch.plan?.find((i) => i.seq_no === seqNo);
  const parameters = instruction?.parameters as { output_vars?: unknown } | undefined;
  const out = parameters?.output_vars;
  const finalAnswer =
    instruction?.type === "calling" &&
    (out === "final_answer" || (Array.isArray(out) && out.includes("final_answer")));
  return deps.tokens({
    tenant: branch.tenant_id,
    taskId: branch.task_id,
    branch: branch.name,
    seq_no: branch.plan === null ? null : seqNo,
    parent_id: branch.head,
    final_answer: finalAnswer,
  });
}

/** Where the step's LLM traces go. */
const tracePrefix = (branch: BranchRecord) => llmTracePrefix(branch.tenant_id, branch.task_id);

/** The budget of a step's LLM session: the branch's, and the tenant's month as calls are made. */
function sessionBudget(deps: StepDeps, branch: BranchRecord): LlmBudget {
  const meter = deps.meter?.(branch.tenant_id, branch.task_id, branch.name);
  return { ...budgetLeft(branch), ...(meter ? { meter } : {}) };
}

/** What the branch may still spend on LLM calls. */
export function budgetLeft(branch: BranchRecord): LlmBudget {
  const { max_tokens, max_cost_usd } = branch.config.budget;
  const used = branch.usage;
  return {
    ...(max_tokens === undefined
      ? {}
      : { tokensLeft: max_tokens - used.input_tokens - used.output_tokens }),
    ...(max_cost_usd === undefined ? {} : { costLeftUsd: max_cost_usd - used.cost_usd }),
  };
}

/** Chooses and runs the work of this step. Throws for anything that is not a success. */
async function decide(deps: StepDeps, branch: BranchRecord, session: LlmSession): Promise<Draft> {
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
  const ranPastEnd = !completed && execution.pcAfter === null;
  // With `evaluate`, the answer is judged before the branch ends: one more step.
  const judging = completed && branch.config.evaluate && deps.evaluator !== undefined;
  return {
    ...base,
    ...(judging ? { pending_after: { kind: "evaluate" } } : {}),
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
function draftForFailure(deps: StepDeps, branch: BranchRecord, error: unknown): Draft {
  const decision = classifyFailure(error);
  if (decision.action === "retry") throw error;
  const planning = branch.head === null || branch.pending !== null;
  const failure = { code: decision.code, message: decision.message, seq_no: branch.pc };
  const why = planning
    ? null
    : decision.action === "fail"
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

async function buildCommit(
  deps: StepDeps,
  branch: BranchRecord,
  draft: Draft,
  calls: LlmCall[],
  durationMs: number,
): Promise<CommitRecord> {
  const prefix = taskBlobPrefix(branch.tenant_id, branch.task_id);
  const depth = branch.head === null ? 0 : branch.depth + 1;
  const id = commitId(branch.bid, depth);
  const outputs = draft.outputs_stored
    ? draft.outputs
    : await spillRecord(draft.outputs, deps.blobs, prefix);
  // The window names where each variable set in its range lives (`fenwick.ts`,
  // `variables.ts`); values kept in windows from before issue 22 go in as values.
  const { window, window_ids: windowIds } =
    branch.head === null ? {} : await nextWindow(deps.store, deps.blobs, branch, depth, outputs);
  const final = draft.final_answer === undefined ? {} : { final_answer: outputs.final_answer };
  const record: CommitRecord = {
    pk: branch.pk,
    sk: commitSk(branch.bid, depth),
    commit_id: id,
    parent_id: branch.head,
    branch: branch.name,
    bid: branch.bid,
    depth,
    type: draft.type,
    seq_no: draft.seq_no,
    instruction: await spillValue(draft.instruction, deps.blobs, prefix, ATTRIBUTE_LIMIT),
    inputs: await spillValue(draft.inputs, deps.blobs, prefix, ATTRIBUTE_LIMIT),
    outputs,
    ...(window === undefined
      ? {}
      : {
          window: (await spillValue(window, deps.blobs, prefix, ATTRIBUTE_LIMIT)) as Record<
            string,
            unknown
          >,
        }),
    ...(windowIds === undefined
      ? {}
      : {
          window_ids: (await spillValue(windowIds, deps.blobs, prefix, ATTRIBUTE_LIMIT)) as Record<
            string,
            string
          >,
        }),
    chain: branch.head === null ? [] : nextChain(branch.head, branch.depth, branch.chain),
    ...(draft.plan ? { plan: draft.plan } : {}),
    plan_commit: draft.plan ? id : branch.plan_commit,
    pc_before: branch.pc,
    pc_after: draft.pc_after,
    error: draft.error,
    llm_calls: calls,
    duration_ms: durationMs,
    ...(draft.details ? { details: draft.details } : {}),
    status_after: draft.status_after,
    pending_after: draft.pending_after,
    updates_after: draft.updates_after,
    ...final,
    created_at: new Date(deps.clock.now()).toISOString(),
  };
  return boundCommit(record, deps.blobs, prefix);
}

/** Moves the branch head to the commit; null when another worker moved it first. */
async function moveHead(
  deps: StepDeps,
  branch: BranchRecord,
  commit: CommitRecord,
): Promise<BranchRecord | null> {
  const set: Array<[string[], unknown]> = [
    [["head"], commit.commit_id],
    [["prev_head"], commit.parent_id],
    [["depth"], commit.depth],
    [["pc"], commit.pc_after],
    [["chain"], commit.chain],
    [["status"], commit.status_after],
    [["pending"], commit.pending_after ?? null],
    [["updates"], commit.updates_after ?? branch.updates],
    [["updated_at"], commit.created_at],
  ];
  // The plan stays on its commit (once per plan version); the branch names it.
  if (commit.plan) set.push([["plan_commit"], commit.commit_id]);
  // The wait this commit ends (`vm/wait.ts`); ordinary steps write nothing more.
  if (branch.waiting) set.push([["waiting"], null]);
  // The failures this commit ends (`vm/retrying.ts`): written only after one.
  if (branch.retrying) set.push([["retrying"], null]);
  // Set by the step that completes; an evaluation commit after it keeps the answer.
  if (commit.final_answer !== undefined) set.push([["final_answer"], commit.final_answer]);
  if (commit.type === "evaluation") set.push([["verdict"], commit.details?.verdict ?? null]);
  if (commit.status_after === "failed") {
    set.push([["error"], (commit.error as { message?: string } | null)?.message ?? "failed"]);
  }
  const running = commit.status_after === "running";
  // The index entry is written once, when the branch starts running (and only here if
  // it is missing): changing index keys on every step would write the index each time.
  if (running && !branch.gsi1pk) set.push(...sweepIndex(branch, commit.created_at));
  const calls = commit.llm_calls;
  const group = groupExit(branch, commit);
  set.push(...group.set);
  const remove = [
    ...(running ? [] : [["gsi1pk"], ["gsi1sk"]]),
    // A task created with a plan has it on its branch until the plan's commit.
    ...(commit.plan ? [["plan"]] : []),
    ...group.remove,
  ];
  const changes: Changes = {
    set,
    ...(remove.length > 0 ? { remove } : {}),
    add: [
      [["usage", "steps"], countsAsStep(branch, commit) ? 1 : 0],
      [["usage", "llm_calls"], calls.length],
      [["usage", "input_tokens"], calls.reduce((n, c) => n + c.input_tokens, 0)],
      [["usage", "output_tokens"], calls.reduce((n, c) => n + c.output_tokens, 0)],
      [["usage", "cost_usd"], calls.reduce((n, c) => n + c.cost_usd, 0)],
    ],
  };
  try {
    return await deps.store.advanceBranch(
      branch.tenant_id,
      branch.task_id,
      branch.name,
      branch.head,
      changes,
      branch,
    );
  } catch (error) {
    if (isErrorKind(error, "conflict")) return null;
    throw error;
  }
}

/** Enqueues "run the instruction after `head`" for the branch. */
export async function enqueueNext(
  deps: Pick<StepDeps, "queue">,
  branch: Pick<BranchRecord, "tenant_id" | "task_id" | "name">,
  head: string | null,
  attempt = "",
): Promise<void> {
  const message: StepMessage = {
    v: 1,
    kind: "step",
    tenant_id: branch.tenant_id,
    task_id: branch.task_id,
    branch: branch.name,
    head,
  };
  await deps.queue.send(message, {
    groupId: branchGroupId(message),
    deduplicationId: digest(branch.task_id, branch.name, head, attempt),
  });
}

/**
 * The tools this branch may see, from the namespace's registry: all of them for a
 * plan or a replan (so a replan sees the code, HTTP and MCP tools the first plan
 * could call), and for a calling only the built-ins and the called tool (at most
 * one read).
 */
async function toolsFor(
  deps: StepDeps,
  branch: BranchRecord,
  called: string | null,
): Promise<{ tools: ReadonlyMap<string, Tool>; allowed: ReadonlySet<string> }> {
  const ns = branch.config.namespace;
  const found =
    called === null
      ? await deps.registry.forNamespace(branch.tenant_id, ns)
      : await deps.registry.forCall(branch.tenant_id, ns, called);
  return { tools: found.all, allowed: found.allowed };
}

/** The variables the parameters reference, as they were set (`vm/variables.ts`). */
async function loadReferenced(
  deps: StepDeps,
  branch: BranchRecord,
  parameters: unknown,
): Promise<Record<string, unknown>> {
  const names = findReferences(parameters).map((r) => r.name);
  return loadVariables(deps.store, deps.blobs, branch, names);
}

function toolContext(deps: StepDeps, branch: BranchRecord, session: LlmSession): ToolContext {
  return {
    tenantId: branch.tenant_id,
    taskId: branch.task_id,
    branch: branch.name,
    idempotencyKey: digest(branch.task_id, branch.name, branch.head),
    namespace: branch.config.namespace,
    goal: branch.config.goal,
    responseFormat: branch.config.response_format,
    llm: session,
    sandbox: deps.sandbox,
    blobs: deps.blobs,
    blobPrefix: taskBlobPrefix(branch.tenant_id, branch.task_id),
    outbound: deps.outbound,
    waiting: branch.waiting ?? null,
    now: deps.clock.now(),
  };
}
