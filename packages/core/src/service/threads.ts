/**
 * Threads: conversations whose turns continue each other. A turn is an
 * ordinary task (its own commits, usage and forks) started from a completed
 * branch of the turn before: its planner is shown the earlier turns' goals and
 * answers (`planning/thread-prompt.ts`), and the earlier branch's variables are
 * its inputs, so `${name}` of any earlier turn resolves in its steps. A thread
 * is named by its first turn's task id; continuing a fork of a turn starts a
 * new line of the thread. The thread's items are written after the turn's task
 * started, so a refused continue leaves nothing; the task's own link
 * (`TaskRecord.thread`) is what a repeat of the same continue writes them from.
 */
import { ConflictError, NotFoundError } from "../errors";
import { TERMINAL_STATUSES } from "../model-values";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { TaskRecord, TaskThread, ThreadHistory } from "../store/records";
import type { TaskStore } from "../store/task-store";
import type { ThreadRecord, ThreadStore, TurnRecord } from "../store/thread-store";
import { loadValue, taskBlobPrefix } from "../store/values";
import { storedVariables } from "../vm/variables";
import type { StartedTask } from "./task-starter";
import type { TaskService } from "./tasks";
import type { ContinueTaskInput } from "./thread-input";

/** The most earlier turns a turn's history keeps (older ones are counted in `omitted`). */
const HISTORY_TURNS = 20;
/** What a turn's history keeps of each goal and answer (the prompt shows less: `thread-prompt.ts`). */
const HISTORY_GOAL_CHARS = 1_000;
const HISTORY_ANSWER_CHARS = 2_000;

export interface ThreadServiceDeps {
  tasks: Pick<TaskService, "starter" | "reads" | "get">;
  store: TaskStore;
  threads: ThreadStore;
  blobs: Blobs;
  clock: Clock;
}

/** A thread as the API shows it: its turns oldest first, and its lines (first turn to each last one). */
export interface ThreadView extends Omit<ThreadRecord, "tenant_id"> {
  turns: Array<Omit<TurnRecord, "thread_id"> & { status: string; final_answer: unknown }>;
  lines: string[][];
}

export class ThreadService {
  constructor(private readonly deps: ThreadServiceDeps) {}

  /**
   * Starts the next turn: a task whose goal is `input.goal`, continuing the
   * answer of `input.branch` (default: the result branch) of task `taskId`,
   * which must have completed. Once per Idempotency-Key and task.
   */
  async continue(
    tenant: string,
    taskId: string,
    input: ContinueTaskInput,
    idempotencyKey: string | null,
  ): Promise<StartedTask & { thread_id: string }> {
    const source = await this.deps.tasks.reads.record(tenant, taskId);
    const branchName = input.branch ?? source.branch;
    const branch = await this.deps.store.getBranch(tenant, taskId, branchName);
    if (!branch) throw new NotFoundError("branch", branchName);
    const where = `task ${taskId}${branchName === source.branch ? "" : ` (branch ${branchName})`}`;
    if (!TERMINAL_STATUSES.has(branch.status)) {
      throw new ConflictError(
        `${where} is ${branch.status}: a turn continues a finished answer; wait until it completes (GET /v1/tasks/${taskId}), then continue it`,
        "task_not_finished",
      );
    }
    if (branch.status !== "completed") {
      throw new ConflictError(
        `${where} ${branch.status}, so it has no answer to continue: retry it (POST /v1/tasks/${taskId}/retry) or fork it, then continue the branch that completed`,
        "task_not_completed",
      );
    }
    const prefix = taskBlobPrefix(tenant, taskId);
    const stored = await storedVariables(this.deps.store, this.deps.blobs, branch);
    const carried: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(stored)) {
      if (name !== "final_answer") carried[name] = await loadValue(value, this.deps.blobs, prefix);
    }
    const answer = await loadValue(branch.final_answer ?? null, this.deps.blobs, prefix);
    const link: TaskThread = {
      thread_id: source.thread?.thread_id ?? source.task_id,
      turn: (source.thread?.turn ?? 1) + 1,
      parent: { task_id: taskId, branch: branchName },
    };
    const history = nextHistory(branch.config.thread, link.thread_id, source, branchName, answer);
    // The task input schema loads with the first continue: it builds the plan language's
    // schemas, which the API's start leaves to the routes that read them.
    const { CreateTaskInput } = await import("./task-input");
    const start = CreateTaskInput.parse({
      goal: input.goal,
      namespace: source.namespace,
      inputs: { ...carried, ...input.inputs },
      budget: input.budget,
      metadata: { ...input.metadata, thread_id: link.thread_id },
      ...(input.name ? { name: input.name } : {}),
      ...(input.response_format ? { response_format: input.response_format } : {}),
      ...(input.webhook_url ? { webhook_url: input.webhook_url } : {}),
    });
    // One key per continued task: the same key on POST /v1/tasks is another start.
    const key = idempotencyKey === null ? null : `continue#${taskId}#${idempotencyKey}`;
    const started = await this.deps.tasks.starter.create(tenant, start, undefined, key, {
      link,
      history,
    });
    await this.#record(tenant, source, started.task, link);
    return { ...started, thread_id: link.thread_id };
  }

  /** One page of the tenant's threads (those continued at least once). */
  async list(
    tenant: string,
    options: { limit: number; cursor: string | null },
  ): Promise<{ threads: Array<Omit<ThreadRecord, "tenant_id">>; next_cursor: string | null }> {
    const page = await this.deps.threads.list(tenant, options);
    return { threads: page.items.map(present), next_cursor: page.cursor };
  }

  /** The thread with its turns (each with its task's status and answer) and its lines. */
  async get(tenant: string, threadId: string): Promise<ThreadView> {
    const thread = await this.#thread(tenant, threadId);
    // By turn, then by start: turns started within one clock tick keep their order.
    const turns = (await this.deps.threads.turns(tenant, threadId)).sort(
      (a, b) => a.turn - b.turn || a.created_at.localeCompare(b.created_at),
    );
    const shown = await Promise.all(
      turns.map(async ({ thread_id: _, ...turn }) => {
        const task = await this.deps.tasks.get(tenant, turn.task_id).catch(() => null);
        return {
          ...turn,
          status: task?.status ?? "deleted",
          final_answer: task?.final_answer ?? null,
        };
      }),
    );
    return { ...present(thread), turns: shown, lines: linesOf(turns) };
  }

  /**
   * The task a continue of `threadOrTask` goes on from: the thread's latest
   * turn, or the task itself when it is one of the tenant's that no turn
   * continued yet (a thread is named by its first turn's task id).
   */
  async latest(tenant: string, threadOrTask: string): Promise<string> {
    const thread = await this.deps.threads.get(tenant, threadOrTask);
    if (thread) return thread.latest_task_id;
    const task = await this.deps.tasks.reads.record(tenant, threadOrTask).catch(() => null);
    if (!task) throw new NotFoundError("thread", threadOrTask);
    return task.task_id;
  }

  async #thread(tenant: string, threadId: string): Promise<ThreadRecord> {
    const thread = await this.deps.threads.get(tenant, threadId);
    if (!thread) throw new NotFoundError("thread", threadId);
    return thread;
  }

  /** The thread's items: the first turn when new, the new turn, the thread's latest turn. */
  async #record(
    tenant: string,
    source: TaskRecord,
    turn: TaskRecord,
    link: TaskThread,
  ): Promise<void> {
    const { threads } = this.deps;
    const existing = await threads.get(tenant, link.thread_id);
    if (!existing && !source.thread) {
      await threads.putTurn(tenant, {
        thread_id: link.thread_id,
        task_id: source.task_id,
        turn: 1,
        parent: null,
        goal: source.goal,
        created_at: source.created_at,
      });
    }
    await threads.putTurn(tenant, {
      thread_id: link.thread_id,
      task_id: turn.task_id,
      turn: link.turn,
      parent: link.parent,
      goal: turn.goal,
      created_at: turn.created_at,
    });
    const now = new Date(this.deps.clock.now()).toISOString();
    const newer = !existing || existing.updated_at <= turn.created_at;
    await threads.put({
      tenant_id: tenant,
      thread_id: link.thread_id,
      title: existing?.title ?? source.title ?? source.goal ?? source.task_id,
      latest_task_id: newer ? turn.task_id : existing.latest_task_id,
      created_at: existing?.created_at ?? source.created_at,
      updated_at: newer ? now : existing.updated_at,
    });
  }
}

/** The history a turn's planner is shown: the source's own, and the source's turn after it. */
function nextHistory(
  previous: ThreadHistory | undefined,
  threadId: string,
  source: TaskRecord,
  branch: string,
  answer: unknown,
): ThreadHistory {
  const turns = [
    ...(previous?.turns ?? []),
    {
      task_id: source.task_id,
      branch,
      goal: source.goal === null ? null : source.goal.slice(0, HISTORY_GOAL_CHARS),
      answer: bounded(answer),
    },
  ];
  const over = Math.max(0, turns.length - HISTORY_TURNS);
  return {
    thread_id: threadId,
    turns: turns.slice(over),
    omitted: (previous?.omitted ?? 0) + over,
  };
}

/** An answer as a history keeps it: as it is when short, else its text cut. */
function bounded(answer: unknown): unknown {
  const text = typeof answer === "string" ? answer : (JSON.stringify(answer) ?? "null");
  if (text.length <= HISTORY_ANSWER_CHARS) return answer;
  return `${text.slice(0, HISTORY_ANSWER_CHARS)}… (${text.length} chars)`;
}

const present = ({ tenant_id: _, ...thread }: ThreadRecord) => thread;

/** Every path from the first turn to a turn nothing continues, as task ids. */
function linesOf(turns: TurnRecord[]): string[][] {
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  for (const turn of turns) {
    if (!turn.parent) roots.push(turn.task_id);
    else
      children.set(turn.parent.task_id, [
        ...(children.get(turn.parent.task_id) ?? []),
        turn.task_id,
      ]);
  }
  const lines: string[][] = [];
  const walk = (id: string, path: string[]) => {
    const next = children.get(id) ?? [];
    if (next.length === 0) lines.push([...path, id]);
    for (const child of next) walk(child, [...path, id]);
  };
  for (const root of roots) walk(root, []);
  return lines;
}
