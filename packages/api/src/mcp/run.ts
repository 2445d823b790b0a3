/**
 * A tool call as a task: the call starts the task, its commits become MCP
 * progress notifications (when the client sent a `progressToken`), and its end
 * becomes the call's result: the final answer, or, for a task that failed or
 * was cancelled, a result with `isError` and the task's error. A task still
 * running when the wait is over (`mcpWaitMs`, 50 s by default: under the MCP
 * SDK client's 60 s request timeout) answers with its id and how to read it,
 * and goes on; so does one that waits for a person's answer.
 */
import { createHash } from "node:crypto";
import {
  type Commit,
  ConflictError,
  type CreateTaskInput,
  isErrorKind,
  type Task,
} from "@stackvm/core";
import type { ApiDeps } from "../deps";

/** What the MCP client is told while the task runs. */
export interface Progress {
  progress: number;
  message: string;
}

/** A tool call's result, as MCP's `CallToolResult`. */
export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: "text"; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** The default wait of a call for its task. */
export const DEFAULT_MCP_WAIT_MS = 50_000;

/**
 * The task id of a call: derived from the tenant, the client's session and the
 * request's id, so that a `notifications/cancelled` (a request of its own, to
 * another instance) finds the task, and a call sent again starts no second task.
 * Without a session a call gets a new id.
 */
export function callTaskId(
  tenant: string,
  session: string | null,
  requestId: string | number,
): string | undefined {
  if (session === null) return undefined;
  const hex = createHash("sha256")
    .update(["mcp-call", tenant, session, JSON.stringify(requestId)].join("\u0000"))
    .digest("hex");
  return `tsk_${hex.slice(0, 20)}`;
}

/** A result that is text, with the task's id and status alongside. */
function result(text: string, structured: Record<string, unknown>, isError = false): ToolResult {
  return {
    content: [{ type: "text", text }],
    structuredContent: structured,
    ...(isError ? { isError: true } : {}),
  };
}

/** An error before any task started (quota, a refused input): a tool error the model can read. */
export function refusal(error: { code?: unknown; message: string }): ToolResult {
  const code = typeof error.code === "string" ? error.code : "error";
  return result(`${code}: ${error.message}`, { error: { code, message: error.message } }, true);
}

/** A commit as one line of progress. */
function describe(commit: Commit): string {
  const ins = commit.instruction as { type?: unknown; parameters?: { tool_name?: unknown } } | null;
  const what =
    commit.type === "plan"
      ? "wrote the plan"
      : ins?.type === "calling" && typeof ins.parameters?.tool_name === "string"
        ? `called ${ins.parameters.tool_name}`
        : typeof ins?.type === "string"
          ? `ran ${ins.type}`
          : commit.type;
  const step = commit.seq_no === null ? "" : ` (step ${commit.seq_no})`;
  return `${commit.branch}: ${what}${step}${commit.error ? ", failed" : ""}`;
}

/** How to read a task that goes on after the call has answered. */
function readIt(taskId: string): string {
  return `Read it with GET /v1/tasks/${taskId} (its final_answer once its status is completed), or watch GET /v1/tasks/${taskId}/events.`;
}

/** The call's answer for the task as it is now. */
export function resultOf(task: Task, waitedMs: number): ToolResult {
  const about = { task_id: task.task_id, status: task.status };
  if (task.status === "completed") {
    const answer = task.final_answer ?? null;
    const text = typeof answer === "string" ? answer : JSON.stringify(answer);
    return result(text, { ...about, final_answer: answer });
  }
  if (task.status === "failed" || task.status === "cancelled") {
    const error = task.error ?? `the task was ${task.status}`;
    return result(
      `Task ${task.task_id} ${task.status}: ${error}. Inspect, fork or retry it like any task (GET /v1/tasks/${task.task_id}).`,
      { ...about, error },
      true,
    );
  }
  if (task.status === "waiting") {
    return result(
      `Task ${task.task_id} is waiting: for a person's answer (GET /v1/tasks/${task.task_id}/branches shows the question; answer it with POST /v1/tasks/${task.task_id}/branches/{name}/input) or for a time to resume. ${readIt(task.task_id)}`,
      about,
    );
  }
  return result(
    `Task ${task.task_id} is still ${task.status} after ${Math.round(waitedMs / 1000)} s; it goes on. ${readIt(task.task_id)}`,
    about,
  );
}

/**
 * Starts the call's task, once: the same call sent again answers its task, and
 * another call under the same request id of the session (a client that counts
 * its ids from 0 again in a session it resumed) is refused, instead of being
 * answered with the first call's task. The body is compared as an idempotency
 * key's is (24 hours), under a key of the derived task id.
 */
async function startOnce(
  deps: Pick<ApiDeps, "tasks">,
  tenant: string,
  input: CreateTaskInput,
  taskId: string | undefined,
) {
  if (taskId === undefined) return deps.tasks.start(tenant, input, null);
  try {
    return await deps.tasks.start(tenant, input, `mcp-call:${taskId}`, taskId);
  } catch (error) {
    if (
      !isErrorKind(error, "conflict") ||
      (error as { code?: unknown }).code !== "idempotency_key_reused"
    ) {
      throw error;
    }
    throw new ConflictError(
      `this session's request id was used before for another call (task ${taskId}); MCP request ids are unique within a session: send this call with a new id, or start a new session with initialize`,
      "request_id_reused",
    );
  }
}

/**
 * Starts the call's task and follows it to its end, the end of the wait, or
 * the client going away (`signal`), sending each commit as progress.
 */
export async function runCall(
  deps: Pick<ApiDeps, "tasks" | "events" | "streams" | "config">,
  tenant: string,
  input: CreateTaskInput,
  options: {
    taskId: string | undefined;
    signal: AbortSignal;
    progress: ((p: Progress) => Promise<void>) | null;
  },
): Promise<ToolResult> {
  const waitMs = deps.config.mcpWaitMs ?? DEFAULT_MCP_WAIT_MS;
  const started = Date.now();
  // Following the task holds one of the tenant's open streams, taken before it
  // starts: a refusal (429) starts nothing.
  const lease = await deps.streams.open(tenant);
  try {
    const { task } = await startOnce(deps, tenant, input, options.taskId);
    const wait = AbortSignal.timeout(waitMs);
    const signal = AbortSignal.any([options.signal, wait]);
    let steps = 0;
    await options.progress?.({ progress: steps, message: `started task ${task.task_id}` });
    let lastEventId: string | null = null;
    let ended = false;
    while (!ended && !signal.aborted) {
      try {
        for await (const event of deps.events.stream(tenant, task.task_id, {
          lastEventId,
          signal,
          tokens: false,
        })) {
          if (event.event === "commit") {
            lastEventId = event.id;
            steps += 1;
            await options.progress?.({ progress: steps, message: describe(event.data) });
          }
          const waiting = event.event === "status" && event.data.status === "waiting";
          if (event.event === "end" || waiting) {
            ended = true;
            break;
          }
        }
      } catch (error) {
        // The wait is over, or the client went away: the task is read as it is.
        if (!signal.aborted) throw error;
      }
    }
    return resultOf(await deps.tasks.get(tenant, task.task_id), Date.now() - started);
  } finally {
    await lease.close();
  }
}
