/**
 * A chat completion that continues a thread: the request names one with the
 * `x-stackvm-thread` header or `metadata.thread_id` (a thread id, or the task
 * id of an earlier completion), and its last user message becomes the next
 * turn's goal (`POST /v1/tasks/{id}/continue`) instead of a cold start. The
 * earlier messages of the request are not passed on: the thread holds the
 * earlier turns' goals, answers and variables.
 */
import type { CreateTaskInput } from "@stackvm/core";
import { StackVMError } from "@stackvm/core";
import { ContinueTaskInput } from "@stackvm/core/api-records";
import type { ApiDeps } from "../deps";
import { answersAgain, CHAT_RETRY_SECONDS, type ChatRequestKey, type ChatRun } from "./once";
import type { ChatCompletionRequest } from "./schemas";

/** The header that names the thread a completion continues, and that the answer names it in. */
export const THREAD_HEADER = "x-stackvm-thread";

/** The thread a request names (the header first), or null for a cold start. */
export function requestedThread(
  header: string | undefined,
  request: ChatCompletionRequest,
): string | null {
  const named = header?.trim() || request.metadata?.thread_id?.trim() || "";
  if (named === "") return null;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(named)) {
    throw new StackVMError(
      "malformed",
      "invalid_thread_id",
      "the thread id (x-stackvm-thread or metadata.thread_id) is 1 to 64 of A-Z, a-z, 0-9, _ and -: send the x-stackvm-thread of an earlier answer",
    );
  }
  return named;
}

/**
 * Starts the next turn of `thread` from its latest turn, with the request's goal
 * and metadata; the same request sent again (an SDK's retry) answers the turn it
 * started, held under its key for {@link CHAT_RETRY_SECONDS}, by the rule of
 * `startChatRun`: while the turn runs, and after its end when the request says it
 * is a retry or no request for it was answered.
 */
export async function continueThread(
  deps: Pick<ApiDeps, "threads" | "tasks">,
  tenant: string,
  thread: string,
  input: CreateTaskInput,
  request: ChatRequestKey,
): Promise<ChatRun & { thread_id: string }> {
  const key = `chatturn~${request.key}`;
  const answer = (taskId: string) => () => deps.tasks.markAnswered(tenant, key, taskId);
  const held = await deps.tasks.heldRun(tenant, key);
  if (held && answersAgain(held.task.status, request.retried || !held.answered)) {
    return {
      task: held.task,
      replayed: true,
      warnings: [],
      thread_id: held.task.thread?.thread_id ?? thread,
      answer: answer(held.task.task_id),
    };
  }
  const latest = await deps.threads.latest(tenant, thread);
  const { conversation: _, ...inputs } = input.inputs;
  const next = ContinueTaskInput.parse({ goal: input.goal, inputs, metadata: input.metadata });
  // Two copies of the request side by side continue the same turn under one key: one turn.
  const started = await deps.threads.continue(tenant, latest, next, request.key);
  await deps.tasks.holdRun(tenant, key, started.task.task_id, CHAT_RETRY_SECONDS);
  return { ...started, answer: answer(started.task.task_id) };
}
