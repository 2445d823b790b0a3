/**
 * Lambda entry of the sandbox function: runs generated code and answers the
 * sandbox protocol. The function has no permissions, no links, no environment of
 * its own and no route out (infra/sandbox.ts); the runner adds the layers inside.
 * The local stack runs this same handler in its own process (LocalSandbox).
 */
import { Logger } from "@aws-lambda-powertools/logger";
import type { SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { SandboxRunner, sandboxConfigFromEnv } from "@stackvm/sandbox";

const logger = new Logger({ serviceName: "stackvm-sandbox" });
const runner = new SandboxRunner(sandboxConfigFromEnv(process.env), {
  log: (level, message, fields) => logger[level](message, fields ?? {}),
});
// Start a QuickJS worker and a Pyodide child now, in the background; a request
// that comes first waits only for what it needs.
void runner.warm().catch(() => {});

/** What Lambda passes as the second argument, as far as the handler uses it. */
interface InvokeContext {
  getRemainingTimeInMillis(): number;
}

/**
 * Answers one sandbox request; a bad request or failing code is an answer, not a
 * thrown error, so Lambda reports a FunctionError only when the sandbox itself
 * broke.
 */
export const handler = async (
  event: unknown,
  context?: InvokeContext,
): Promise<SandboxResponse> => {
  return runner.handle(event, context?.getRemainingTimeInMillis());
};

/** Ends the runner's workers and children (the local stand-in calls it before exiting). */
export const close = (): Promise<void> => runner.close();
