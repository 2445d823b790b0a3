/**
 * The records a run starts from: a new task, a new branch, and a branch set
 * `running`. Starting a task, forking a commit and retrying a task all build
 * them, so they live apart from each of those protocols.
 */
import { newBranchId } from "../ids";
import { ZERO_USAGE } from "../model-values";
import { sweepIndex, taskKey, taskPk, tasksIndexPk } from "../store/keys";
import type { BranchConfig, BranchRecord, TaskRecord } from "../store/records";
import type { CreateTaskInput } from "./task-input";
import { taskTitle } from "./task-title";

/** Sets a new branch `running`, listed in the sweep index. */
export function markRunning(branch: BranchRecord, now: string): void {
  branch.status = "running";
  for (const [[name], value] of sweepIndex(branch, now)) {
    (branch as unknown as Record<string, unknown>)[name!] = value;
  }
}

/** A new task record, `queued`, with `main` as its result branch. */
export function newTask(
  tenant: string,
  taskId: string,
  input: CreateTaskInput,
  responseFormat: TaskRecord["response_format"],
  now: string,
): TaskRecord {
  return {
    ...taskKey(tenant, taskId),
    sk: "TASK",
    gsi1pk: tasksIndexPk(tenant),
    gsi1sk: `${now}#${taskId}`,
    tenant_id: tenant,
    task_id: taskId,
    goal: input.goal ?? null,
    name: input.name ?? null,
    title: taskTitle(input, taskId),
    namespace: input.namespace,
    status: "queued",
    branch: "main",
    final_answer: null,
    error: null,
    response_format: responseFormat,
    metadata: input.metadata,
    webhook_url: input.webhook_url ?? null,
    evaluate: input.evaluate,
    ...(input.keep ? { keep: true } : {}),
    deleted_usage: ZERO_USAGE,
    created_at: now,
    updated_at: now,
  };
}

/** A new branch record with no commits. */
export function newBranch(
  tenant: string,
  taskId: string,
  name: string,
  config: BranchConfig,
  now: string,
): BranchRecord {
  return {
    pk: taskPk(tenant, taskId),
    sk: `B#${name}`,
    tenant_id: tenant,
    task_id: taskId,
    name,
    bid: newBranchId(),
    status: "queued",
    head: null,
    prev_head: null,
    depth: -1,
    pc: null,
    plan: null,
    plan_commit: null,
    chain: [],
    lineage: [],
    forked_from: null,
    final_answer: null,
    error: null,
    usage: { ...ZERO_USAGE },
    updates: 0,
    pending: null,
    cancel_requested: false,
    config,
    verdict: null,
    created_at: now,
    updated_at: now,
  };
}
