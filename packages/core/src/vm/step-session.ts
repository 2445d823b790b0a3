/**
 * What a step (or a group member) works with beside its instruction: its LLM
 * session and the watch of its call in flight, the tools it may see, the
 * variables its parameters reference, and the context its tools get.
 */
import { digest } from "../ids";
import { llmTracePrefix } from "../llm/trace";
import type { LlmBudget, LlmSession } from "../llm/types";
import { findReferences } from "../plan/references";
import type { BranchRecord } from "../store/records";
import { taskBlobPrefix } from "../store/values";
import type { Tool, ToolContext } from "../tools/tool";
import { watchCalls } from "./in-flight";
import type { StepDeps } from "./step-deps";
import { loadVariables } from "./variables";

/**
 * The LLM session of a step at `seqNo` (null: a plan), giving up on an unreachable
 * LLM at `giveUpAt` (`vm/retrying.ts`), and the watch that writes its call in
 * flight on the branch while the model thinks (`vm/in-flight.ts`).
 */
export function openSession(
  deps: StepDeps,
  branch: BranchRecord,
  seqNo: number | null,
  giveUpAt: number,
) {
  const watch = watchCalls({ store: deps.store, now: deps.clock.now }, branch);
  const session = deps.llm(
    sessionBudget(deps, branch),
    tracePrefix(branch),
    giveUpAt,
    tokensFor(deps, branch, seqNo),
    watch,
  );
  return { session, watch };
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

/**
 * The tools this branch may see, from the namespace's registry: all of them for a
 * plan or a replan (so a replan sees the code, HTTP and MCP tools the first plan
 * could call), and for a calling only the built-ins and the called tool (at most
 * one read).
 */
export async function toolsFor(
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
export async function loadReferenced(
  deps: StepDeps,
  branch: BranchRecord,
  parameters: unknown,
): Promise<Record<string, unknown>> {
  const names = findReferences(parameters).map((r) => r.name);
  return loadVariables(deps.store, deps.blobs, branch, names);
}

export function toolContext(
  deps: StepDeps,
  branch: BranchRecord,
  session: LlmSession,
): ToolContext {
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
    ...(deps.files ? { files: deps.files } : {}),
    outbound: deps.outbound,
    waiting: branch.waiting ?? null,
    now: deps.clock.now(),
    ...(deps.tracer ? { tracer: deps.tracer } : {}),
  };
}
