/**
 * What a Server-Sent Events answer says when its body throws after the stream
 * began (a status and headers are already sent: only one more event can tell
 * the client). Hono's `streamSSE` does not do this safely on its own: given an
 * `onError`, it writes its own `event: error` with the error's raw message after
 * it, which can name a table, a queue or an address inside the stack; without
 * one, it prints the error to the console and ends the stream without a word.
 * So each stream's body runs through {@link streamBody}, which catches what it
 * throws, and Hono never sees an error.
 */
import type { Log, StackVMError } from "@stackvm/core";

/** A failure as the stream says it: a task deleted under it, or anything else. */
export interface StreamFailure {
  /** `not_found` when the task was deleted while the stream ran; else `internal`. */
  code: "not_found" | "internal";
  message: string;
}

/** How a thrown error reads on the stream; logs what is not the client's to see. */
export function streamFailure(
  error: unknown,
  log: Log,
  context: Record<string, unknown>,
): StreamFailure {
  if ((error as Partial<StackVMError>)?.code === "not_found") {
    log.info("event stream ended: its task is gone", context);
    return {
      code: "not_found",
      message: "the task was deleted while it was streamed: there is nothing more to send",
    };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  log.error("event stream failed", { ...context, error: { name: e.name, message: e.message } });
  return { code: "internal", message: "the event stream failed: reconnect" };
}

/**
 * Runs a stream's body; what it throws goes to `fail` (whose own failure is
 * dropped: the client may be gone).
 *
 * @example
 * return streamSSE(c, (stream) =>
 *   streamBody(() => send(stream), (error) => stream.writeSSE({ event: "error", data: ... })),
 * );
 */
export async function streamBody(
  body: () => Promise<void>,
  fail: (error: unknown) => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    await fail(error).catch(() => undefined);
  }
}
