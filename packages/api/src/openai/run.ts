/**
 * A chat completion as a task: the request becomes a task's input, and the
 * task's events become the answer. The final answer's text streams as the step
 * that writes `final_answer` writes it (`event: token` with `final_answer`, on
 * the task's result branch); when the task ends, whatever of the final answer
 * did not come as text (an `assign`, a JSON value, text missed on a reconnect)
 * follows in one piece.
 */
import type { Task, TaskEvents, TaskService } from "@stackvm/core";
import { StackVMError } from "@stackvm/core";
import { CreateTaskInput } from "@stackvm/core/api-records";
import { answerFormat } from "./fields";
import type { ChatCompletionRequest, ChatMessage } from "./schemas";

/** What a chat completion starts: the goal and its context. */
export function taskInput(
  request: ChatCompletionRequest,
  target: { namespace: string; plan?: unknown[] },
): CreateTaskInput {
  const messages = request.messages;
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") {
      last = i;
      break;
    }
  }
  const goal = last < 0 ? "" : textOf(messages[last]!);
  if (goal.trim() === "") {
    throw new StackVMError(
      "malformed",
      "no_user_message",
      "messages hold no user message with text: the last user message is the goal of the run",
    );
  }
  const conversation = messages
    .filter((_, i) => i !== last)
    .map((m) => ({ role: m.role, content: textOf(m) }));
  // Through the same schema as POST /v1/tasks: its limits and defaults hold here too.
  const answer = answerFormat(request);
  return CreateTaskInput.parse({
    goal,
    ...(answer ? { response_format: answer } : {}),
    ...(target.plan ? { plan: target.plan } : {}),
    namespace: target.namespace,
    inputs: conversation.length > 0 ? { conversation } : {},
    metadata: { ...request.metadata, source: "chat.completions" },
  });
}

/** A message's text: its string, or its text parts joined. */
function textOf(message: ChatMessage): string {
  if (typeof message.content === "string") return message.content;
  if (message.content === null) return "";
  return message.content.map((part) => part.text ?? "").join("");
}

/** The final answer as text: a string as is, any other value as JSON. */
export function answerText(task: Task): string {
  const answer = task.final_answer;
  if (answer === null || answer === undefined) return "";
  return typeof answer === "string" ? answer : JSON.stringify(answer);
}

/** What following a task yields: text of the final answer, then the task as it ended. */
export type RunEvent = { kind: "text"; text: string } | { kind: "end"; task: Task };

/**
 * Follows a task until it ends (or stops to wait for a person), reconnecting the
 * events stream as its connections reach their time limit. Yields the final
 * answer's text as it is written (with `live`: only a streamed completion asks
 * the task's steps to publish their text), then the rest of it, then the task.
 */
export async function* followRun(
  deps: { events: TaskEvents; tasks: TaskService },
  tenant: string,
  task: { task_id: string; branch: string },
  options: { signal?: AbortSignal; live: boolean },
): AsyncGenerator<RunEvent> {
  const { signal, live } = options;
  let streamed = "";
  let lastEventId: string | null = null;
  let ended = false;
  while (!ended && !signal?.aborted) {
    for await (const event of deps.events.stream(tenant, task.task_id, {
      lastEventId,
      signal,
      tokens: live,
    })) {
      if (event.event === "commit") lastEventId = event.id;
      if (event.event === "token") {
        const { data } = event;
        if (data.final_answer && data.purpose === "llm_generate" && data.branch === task.branch) {
          streamed += data.text;
          yield { kind: "text", text: data.text };
        }
      }
      // A run that waits for a person ends the completion: the task goes on once answered.
      if (event.event === "end" || (event.event === "status" && event.data.status === "waiting")) {
        ended = true;
        break;
      }
    }
  }
  const final = await deps.tasks.get(tenant, task.task_id);
  const whole = answerText(final);
  // Text already sent is kept; what the stream did not carry follows.
  if (whole.startsWith(streamed) && whole.length > streamed.length) {
    yield { kind: "text", text: whole.slice(streamed.length) };
  }
  yield { kind: "end", task: final };
}

/**
 * Why a run that ended without completing is an error, in OpenAI's words. A
 * failed or cancelled run is a 400: starting it again is a new run to pay for,
 * and 400 is the one status none of the SDKs retries (`openai` retries 408,
 * 409, 429 and 5xx unless `x-should-retry: false`; the AI SDK 408, 409, 429 and
 * 5xx; LangChain all but 400-407, 409 and 413, 422 included). Retry the task
 * itself (`POST /v1/tasks/{id}/retry`) or send the request again.
 */
export function runError(task: Task): { status: 400 | 409; code: string; message: string } | null {
  if (task.status === "completed") return null;
  const where = `task ${task.task_id} (GET /v1/tasks/${task.task_id})`;
  if (task.status === "waiting") {
    return {
      status: 409,
      code: "task_waiting",
      message: `${where} waits for a person's answer: answer it, then read the task for the final answer`,
    };
  }
  return {
    status: 400,
    code: task.status === "cancelled" ? "task_cancelled" : "task_failed",
    message: `${where} ${task.status}${task.error ? `: ${task.error}` : ""}; inspect, fork or retry it like any task (POST /v1/tasks/${task.task_id}/retry)`,
  };
}
