/**
 * One run per chat completion request, however often a client sends it. The
 * SDKs integrators bring retry on their own (a timeout, a dropped connection, a
 * 5xx): `openai` up to 2 times, the AI SDK 2, LangChain 6, each retry a new
 * request. A retry answers the run the first request started:
 *
 * - with an `Idempotency-Key`, the same key and body within 24 hours answer the
 *   same run, as for `POST /v1/tasks`;
 * - without one, the same body from the same tenant within
 *   {@link CHAT_RETRY_SECONDS} answers the same run while it has not ended;
 *   after its end, when the request says it is a retry (`openai`'s
 *   `x-stainless-retry-count` above 0) or when no request for that run was
 *   answered (the client gave up on each before the end: LangChain sends no
 *   retry header, and its third try can come after the run ended). A request
 *   sent again once its run ended and was answered is a new question, and
 *   starts a new run.
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
export async function startChatRun(
  tasks: TaskService,
  tenant: string,
  request: ChatCompletionRequest,
  input: CreateTaskInput,
  signals: RetrySignals,
): Promise<ChatRun> {
  if (signals.idempotencyKey !== undefined) {
    return {
      ...(await tasks.start(tenant, input, `chat~${signals.idempotencyKey}`)),
      answer: none,
    };
  }
  const retried = Number.parseInt(signals.retryCount ?? "0", 10) > 0;
  const fingerprint = sha256Hex(new TextEncoder().encode(JSON.stringify(request)));
  const key = `chatreq~${fingerprint}`;
  const started = await tasks.startOnce(tenant, input, key, {
    seconds: CHAT_RETRY_SECONDS,
    reuse: (task, answered) => retried || !answered || !ENDED.has(task.status),
  });
  return { ...started, answer: () => tasks.markAnswered(tenant, key, started.task.task_id) };
}

/** A chat request's run, and what notes that the request was answered. */
export type ChatRun = StartedTask & {
  /**
   * Called just before the answer is sent to a client still connected: the
   * same request sent again after the run ended is then a new question.
   */
  answer: () => Promise<void>;
};

const none = () => Promise.resolve();

/** What a chat request that continues a thread is known by, when it is sent again. */
export interface ChatRequestKey {
  /** The `Idempotency-Key`, else a fingerprint of the thread and the request's body. */
  key: string;
  /** The request says it is a retry (`x-stainless-retry-count` above 0), or carries a key. */
  retried: boolean;
}

/**
 * The key of a request that continues `thread`: a retry of it answers the turn it
 * started, as {@link startChatRun} does for a cold start (`openai/thread.ts`
 * holds the key for that turn).
 */
export function chatRequestKey(
  thread: string,
  request: ChatCompletionRequest,
  signals: RetrySignals,
): ChatRequestKey {
  if (signals.idempotencyKey !== undefined) {
    return {
      key: `key~${sha256Hex(new TextEncoder().encode(signals.idempotencyKey))}`,
      retried: true,
    };
  }
  const fingerprint = sha256Hex(new TextEncoder().encode(JSON.stringify([thread, request])));
  return {
    key: `req~${fingerprint}`,
    retried: Number.parseInt(signals.retryCount ?? "0", 10) > 0,
  };
}

/** Whether a turn with `status` that a request started answers that request sent again. */
export function answersAgain(status: string, retried: boolean): boolean {
  return retried || !ENDED.has(status);
}
