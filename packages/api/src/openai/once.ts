/**
 * One run per chat completion request, however often a client sends it. The
 * SDKs integrators bring retry on their own (a timeout, a dropped connection, a
 * 5xx): `openai` up to 2 times, the AI SDK 2, LangChain 6, each retry a new
 * request. A retry answers the run the first request started:
 *
 * - with an `Idempotency-Key`, the same key and body within 24 hours answer the
 *   same run, as for `POST /v1/tasks`;
 * - without one, the same body from the same tenant within
 *   {@link CHAT_RETRY_SECONDS} answers the same run while it has not ended,
 *   and whatever its end when the request says it is a retry (`openai`'s
 *   `x-stainless-retry-count` above 0); a request sent again after its run
 *   ended, with no such header, is a new question and starts a new run.
 *
 * A run that ended without an answer is answered so that the SDKs do not retry
 * it at all (`x-should-retry: false`, and a 4xx status none of them retries:
 * see `runError`).
 */
import type { CreateTaskInput, StartedTask, TaskService } from "@stackvm/core";
import { sha256Hex } from "@stackvm/core";
import type { ChatCompletionRequest } from "./schemas";

/** How long the same request without an `Idempotency-Key` answers the same run. */
export const CHAT_RETRY_SECONDS = 900;

/** What the request's headers say about itself. */
export interface RetrySignals {
  /** `Idempotency-Key`. */
  idempotencyKey?: string | undefined;
  /** `x-stainless-retry-count`: the `openai` client's attempt number (0 the first). */
  retryCount?: string | undefined;
}

const ENDED = new Set(["completed", "failed", "cancelled"]);

/** Starts the request's run, or answers the run the same request started before. */
export function startChatRun(
  tasks: TaskService,
  tenant: string,
  request: ChatCompletionRequest,
  input: CreateTaskInput,
  signals: RetrySignals,
): Promise<StartedTask> {
  if (signals.idempotencyKey !== undefined) {
    return tasks.start(tenant, input, `chat~${signals.idempotencyKey}`);
  }
  const retried = Number.parseInt(signals.retryCount ?? "0", 10) > 0;
  const fingerprint = sha256Hex(new TextEncoder().encode(JSON.stringify(request)));
  return tasks.startOnce(tenant, input, `chatreq~${fingerprint}`, {
    seconds: CHAT_RETRY_SECONDS,
    reuse: (task) => retried || !ENDED.has(task.status),
  });
}
