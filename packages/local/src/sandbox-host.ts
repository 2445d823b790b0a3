/**
 * The process that `LocalSandbox` starts: it plays the sandbox Lambda, running
 * the same handler (`@stackvm/functions/sandbox`) for requests that arrive over
 * the IPC channel. Its environment holds only the sandbox's own settings, and
 * `LocalSandbox` starts it in an empty network namespace where it can, before
 * the stack opens any store, and it closes any descriptor it inherited anyway.
 */
import { closeInheritedDescriptors } from "./inherited-descriptors";

// Before the runner starts any child: whatever the stack left open without
// close-on-exec would pass into every child, and through it past every check.
closeInheritedDescriptors();
const { close, handler } = await import("@stackvm/functions/sandbox");

interface Invocation {
  id: number;
  request: unknown;
  /** The time the invocation may take, as Lambda's timeout gives it. */
  remainingMs: number;
}

/** Answers the stack; a stack that already went away (EPIPE) is not an error here. */
function reply(message: unknown): void {
  if (process.connected) process.send?.(message, undefined, undefined, () => {});
}

process.on("message", (message: Invocation) => {
  const deadline = Date.now() + message.remainingMs;
  handler(message.request, { getRemainingTimeInMillis: () => deadline - Date.now() }).then(
    (response) => reply({ id: message.id, response }),
    (error: unknown) =>
      reply({
        id: message.id,
        failure: error instanceof Error ? error.message : String(error),
      }),
  );
});

// The stack went away: end the runner's workers and children, then this process.
process.on("disconnect", () => {
  void close().finally(() => process.exit(0));
});

reply({ ready: true });
