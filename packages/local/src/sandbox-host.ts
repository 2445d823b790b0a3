/**
 * The process that `LocalSandbox` starts: it plays the sandbox Lambda, running
 * the same handler (`@stackvm/functions/sandbox`) for requests that arrive over
 * the IPC channel. Its environment holds only the sandbox's own settings, and
 * `LocalSandbox` starts it in an empty network namespace where it can.
 */
import { close, handler } from "@stackvm/functions/sandbox";

interface Invocation {
  id: number;
  request: unknown;
  /** The time the invocation may take, as Lambda's timeout gives it. */
  remainingMs: number;
}

process.on("message", (message: Invocation) => {
  const deadline = Date.now() + message.remainingMs;
  handler(message.request, { getRemainingTimeInMillis: () => deadline - Date.now() }).then(
    (response) => process.send?.({ id: message.id, response }),
    (error: unknown) =>
      process.send?.({
        id: message.id,
        failure: error instanceof Error ? error.message : String(error),
      }),
  );
});

// The stack went away: end the runner's workers and children, then this process.
process.on("disconnect", () => {
  void close().finally(() => process.exit(0));
});

process.send?.({ ready: true });
