/**
 * Turns stored records into what clients see (`spec/http-api.md`): internal fields
 * dropped, stored references to large values shown as
 * `{ "$ref": "s3", size, sha256, url }` with a presigned URL. Only the value slots
 * the store writes (`store/values.ts`) are read for references: a user value is
 * shown as it was given, whatever its shape.
 */
import type {
  Branch,
  Commit,
  LlmCallInFlight,
  Retrying,
  RunningGroup,
  Task,
  Usage,
} from "../model";
import { TERMINAL_STATUSES, ZERO_USAGE } from "../model-values";
import type { Blobs } from "../ports/blobs";
import type {
  BranchRecord,
  CommitRecord,
  GroupRecord,
  TaskRecord,
  WaitingRecord,
} from "../store/records";
import { decodeValue, isStoredRef, taskBlobPrefix } from "../store/values";
import { storedTitle } from "./task-title";

/** How long presigned URLs in answers stay valid. */
const URL_SECONDS = 3600;

export class Presenter {
  constructor(
    private readonly blobs: Blobs,
    /** For the elapsed time of a call in flight. */
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * One stored value as clients see it: a reference to a spilled value becomes
   * `{ $ref: "s3", size, sha256, url }`, an escaped user value is unescaped, and
   * anything else is the user's value, shown as it is (never looked into).
   */
  async value(stored: unknown, tenant: string, taskId: string): Promise<unknown> {
    if (!isStoredRef(stored)) return decodeValue(stored);
    const prefix = taskBlobPrefix(tenant, taskId);
    return {
      $ref: "s3",
      size: stored.size,
      sha256: stored.$blob,
      url: await this.blobs.presign(prefix, stored.$blob, URL_SECONDS),
    };
  }

  /** A record of stored values (variables, outputs, inputs) as clients see it. */
  async values(
    stored: Record<string, unknown>,
    tenant: string,
    taskId: string,
  ): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(stored)) {
      out[name] = await this.value(value, tenant, taskId);
    }
    return out;
  }

  async task(task: TaskRecord, branches: BranchRecord[]): Promise<Task> {
    const result = branches.find((b) => b.name === task.branch);
    const usage = branches.reduce(
      (sum, b) => addUsage(sum, b.usage),
      task.deleted_usage ?? ZERO_USAGE,
    );
    // An evaluated task whose result branch was rejected is still at work (new
    // attempts, then the choice of the best answer) until the record says it ended.
    const evaluating =
      task.evaluate &&
      !TERMINAL_STATUSES.has(task.status) &&
      result?.status === "completed" &&
      result.verdict?.accept === false;
    return {
      task_id: task.task_id,
      goal: task.goal,
      name: task.name ?? null,
      title: storedTitle(task),
      namespace: task.namespace,
      status: evaluating ? "running" : (result?.status ?? task.status),
      branch: task.branch,
      final_answer: await this.value(result?.final_answer ?? null, task.tenant_id, task.task_id),
      error: result?.error ?? task.error ?? null,
      response_format: task.response_format,
      metadata: task.metadata,
      usage,
      created_at: task.created_at,
      updated_at: [task.updated_at, ...branches.map((b) => b.updated_at)].sort().at(-1)!,
      ...(task.thread ? { thread: task.thread } : {}),
      ...(result && retryingOf(result) ? { retrying: retryingOf(result)! } : {}),
      ...(result && inFlightOf(result, this.now())
        ? { llm_call: inFlightOf(result, this.now())! }
        : {}),
      ...(task.keep ? { keep: true as const } : {}),
      // The result branch's copy of the namespace holds the mode the task started with.
      ...(result?.config.namespace.planning === "adaptive"
        ? { planning: "adaptive" as const }
        : {}),
    };
  }

  async branch(branch: BranchRecord): Promise<Branch> {
    const waiting = branch.waiting;
    return {
      name: branch.name,
      status: branch.status,
      head: branch.head,
      ...(waiting && !waiting.answer && !TERMINAL_STATUSES.has(branch.status)
        ? { waiting: presentWaiting(waiting) }
        : {}),
      ...(retryingOf(branch) ? { retrying: retryingOf(branch)! } : {}),
      ...(inFlightOf(branch, this.now()) ? { llm_call: inFlightOf(branch, this.now())! } : {}),
      ...(branch.group && !TERMINAL_STATUSES.has(branch.status)
        ? { group: presentGroup(branch.group) }
        : {}),
      forked_from: branch.forked_from,
      final_answer: await this.value(branch.final_answer ?? null, branch.tenant_id, branch.task_id),
      error: branch.error,
      created_at: branch.created_at,
      updated_at: branch.updated_at,
    };
  }

  async commit(commit: CommitRecord, tenant: string, taskId: string): Promise<Commit> {
    const v = (x: unknown) => this.value(x, tenant, taskId);
    return {
      commit_id: commit.commit_id,
      parent_id: commit.parent_id,
      branch: commit.branch,
      type: commit.type,
      seq_no: commit.seq_no,
      instruction: await v(commit.instruction ?? null),
      inputs: await v(commit.inputs ?? null),
      outputs: await this.values(commit.outputs, tenant, taskId),
      pc_before: commit.pc_before,
      pc_after: commit.pc_after,
      error: commit.error ?? null,
      llm_calls: commit.llm_calls,
      duration_ms: commit.duration_ms,
      created_at: commit.created_at,
      // A commit too large for the store keeps its details in the blob store (`vm/record-bounds.ts`).
      ...(commit.details
        ? {
            details: (isStoredRef(commit.details)
              ? await v(commit.details)
              : commit.details) as Record<string, unknown>,
          }
        : {}),
    };
  }
}

export function addUsage(a: Usage, b: Usage | undefined): Usage {
  if (!b) return a;
  return {
    steps: a.steps + b.steps,
    llm_calls: a.llm_calls + b.llm_calls,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cost_usd: Math.round((a.cost_usd + b.cost_usd) * 1e8) / 1e8,
  };
}

/** The call a running branch waits on (`Branch.llm_call`): only while it runs. */
export function inFlightOf(branch: BranchRecord, now: number): LlmCallInFlight | null {
  const c = branch.llm_call;
  if (!c || branch.status !== "running") return null;
  return {
    purpose: c.purpose,
    model: c.model,
    attempt: c.attempt,
    started_at: c.started_at,
    elapsed_ms: Math.max(0, now - Date.parse(c.started_at)),
    tokens_so_far: c.tokens_so_far,
  };
}

/** What a retrying branch shows (`Branch.retrying`): only while it has not ended. */
function retryingOf(branch: BranchRecord): Retrying | null {
  const r = branch.retrying;
  if (!r || TERMINAL_STATUSES.has(branch.status)) return null;
  return {
    attempt: r.attempt,
    max_attempts: r.max_attempts,
    error: r.error,
    next_attempt_at: r.next_attempt_at,
    since: r.since,
  };
}

/** What a waiting branch shows (`Branch.waiting`). */
export function presentWaiting(waiting: WaitingRecord): NonNullable<Branch["waiting"]> {
  return {
    kind: waiting.kind,
    question: waiting.question ?? null,
    schema: waiting.schema ?? null,
    until: waiting.until ?? null,
    expires_at: waiting.expires_at ?? null,
  };
}

/** A group's mark as clients see it: the members done as a list, in plan order. */
export function presentGroup(group: GroupRecord): RunningGroup {
  return {
    base: group.base,
    members: group.members,
    done: group.members.filter((m) => group.done[String(m)] === true),
    started_at: group.started_at,
  };
}
