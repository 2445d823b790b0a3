/**
 * A Lambda custom runtime that serves exactly one invocation: it asks the
 * Runtime API for the next event, answers it (or reports its error), and
 * returns, so that the process can exit. The data sandbox function runs on it
 * (`sandbox-data.ts`): an instance that served one run never serves another,
 * so nothing of one tenant's run can meet the next one's on a warm instance.
 *
 * It speaks only the Runtime API's documented requests (version 2018-06-01):
 * `GET /runtime/invocation/next`, `POST /runtime/invocation/{id}/response`,
 * `POST /runtime/invocation/{id}/error` and `POST /runtime/init/error`; no
 * runtime interface client is needed, and the whole of it can be tested
 * against a loopback server that answers those four.
 */

const API_VERSION = "2018-06-01";

/** What the handler is given besides the event. */
export interface InvocationContext {
  requestId: string;
  /** Milliseconds left before Lambda ends the invocation. */
  remainingMs: number;
}

/** Answers one event; a thrown error is reported to Lambda as the invocation's error. */
export type OneShotHandler = (event: unknown, context: InvocationContext) => Promise<unknown>;

/** How the invocation ended, for the exit code and the log. */
export type OneShotResult =
  | { status: "answered"; requestId: string }
  | { status: "failed"; requestId: string; error: string }
  | { status: "unreachable"; error: string };

const base = (api: string) => `http://${api}/${API_VERSION}/runtime`;

/** The error body Lambda expects, and the header that names its type. */
function errorRequest(error: unknown): { body: string; headers: Record<string, string> } {
  const errorType = "Sandbox.Failed";
  const errorMessage = error instanceof Error ? error.message : String(error);
  return {
    body: JSON.stringify({ errorType, errorMessage, stackTrace: [] }),
    headers: {
      "content-type": "application/json",
      "lambda-runtime-function-error-type": errorType,
    },
  };
}

/**
 * Fetches one invocation, runs the handler on it, posts its answer, and
 * returns. `api` is `AWS_LAMBDA_RUNTIME_API` (host:port).
 *
 * @example
 * const result = await serveOneInvocation(process.env.AWS_LAMBDA_RUNTIME_API, async (event) => ({ ok: true }));
 * process.exit(result.status === "unreachable" ? 1 : 0);
 */
export async function serveOneInvocation(
  api: string,
  handler: OneShotHandler,
  fetchImpl: typeof fetch = fetch,
): Promise<OneShotResult> {
  let next: Response;
  try {
    next = await fetchImpl(`${base(api)}/invocation/next`);
  } catch (error) {
    return { status: "unreachable", error: (error as Error).message };
  }
  const requestId = next.headers.get("lambda-runtime-aws-request-id");
  if (!next.ok || !requestId) {
    return {
      status: "unreachable",
      error: `the Runtime API answered ${next.status} without a request id`,
    };
  }
  const deadline = Number(next.headers.get("lambda-runtime-deadline-ms"));
  const text = await next.text();
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    // The handler answers anything that is not its protocol with a clear error.
    event = text;
  }
  const remainingMs = Number.isFinite(deadline) && deadline > 0 ? deadline - Date.now() : 60_000;
  const at = `${base(api)}/invocation/${encodeURIComponent(requestId)}`;
  try {
    const answer = await handler(event, { requestId, remainingMs });
    await fetchImpl(`${at}/response`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(answer),
    });
    return { status: "answered", requestId };
  } catch (error) {
    const request = errorRequest(error);
    await fetchImpl(`${at}/error`, { method: "POST", ...request }).catch(() => {});
    return { status: "failed", requestId, error: (error as Error).message };
  }
}

/** Reports a failed start (`POST /runtime/init/error`), so that Lambda says why. */
export async function reportInitError(
  api: string,
  error: unknown,
  fetchImpl: typeof fetch = fetch,
): Promise<void> {
  await fetchImpl(`${base(api)}/init/error`, { method: "POST", ...errorRequest(error) }).catch(
    () => {},
  );
}
