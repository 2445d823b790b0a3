/**
 * The sandbox port on AWS: a synchronous Lambda `Invoke` (RequestResponse) of the
 * sandbox function. Lambda's own failures are translated at this boundary: a
 * FunctionError becomes a protocol answer (a timeout or an out-of-memory end of
 * the function is the code's doing; a crash is retryable), throttling and service
 * errors become `RetryableError`, a request too large a `StepError`.
 */
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { RetryableError, type SandboxPort, StepError } from "@stackvm/core";
import {
  DEFAULT_SANDBOX_LIMITS,
  requestedSandboxLimits,
  type SandboxLimits,
  type SandboxRequest,
  SandboxResponse,
  sandboxError,
  sandboxFailure,
} from "@stackvm/core/sandbox-protocol";

/** Lambda errors that mean "not now": the same invocation may work later. */
const RETRYABLE_ERRORS = new Set([
  "TooManyRequestsException",
  "ServiceException",
  "ResourceNotReadyException",
  "ResourceConflictException",
  "EC2ThrottledException",
  "EC2UnexpectedException",
  "ENILimitReachedException",
  "SubnetIPAddressLimitReachedException",
  "SnapStartNotReadyException",
  "SnapStartTimeoutException",
  "TimeoutError",
]);

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * `SandboxPort` over Lambda Invoke.
 *
 * @example
 * const sandbox = new LambdaSandbox(new LambdaClient({}), config.sandboxFunction);
 * const answer = await sandbox.run({ v: 1, language: "python", code: "1 + 1" });
 */
/** A Lambda client with the default credential chain. */
export const lambdaClient = (region: string): LambdaClient => new LambdaClient({ region });

export class LambdaSandbox implements SandboxPort {
  readonly #ceiling: SandboxLimits;

  constructor(
    private readonly lambda: Pick<LambdaClient, "send">,
    private readonly functionName: string,
    /** The sandbox function's ceiling, used to describe the limits of a failed call. */
    ceiling: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
  ) {
    this.#ceiling = ceiling;
  }

  async run(request: SandboxRequest): Promise<SandboxResponse> {
    const limits = requestedSandboxLimits(request, this.#ceiling);
    let output: { Payload?: Uint8Array; FunctionError?: string };
    try {
      output = await this.lambda.send(
        new InvokeCommand({
          FunctionName: this.functionName,
          InvocationType: "RequestResponse",
          Payload: encoder.encode(JSON.stringify(request)),
        }),
      );
    } catch (error) {
      throw translateInvokeError(error);
    }
    const text = output.Payload ? decoder.decode(output.Payload) : "";
    if (output.FunctionError) return functionFailure(text, limits);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const parsed = SandboxResponse.safeParse(body);
    if (parsed.success) return parsed.data;
    return sandboxFailure(
      sandboxError(
        "internal",
        "the sandbox function answered something that is not the sandbox protocol",
      ),
      limits,
    );
  }
}

/** The function ran and failed: Lambda ended it (timeout, memory) or it crashed. */
function functionFailure(text: string, limits: SandboxLimits): SandboxResponse {
  let errorType = "";
  let errorMessage = text;
  try {
    const body = JSON.parse(text) as { errorType?: unknown; errorMessage?: unknown };
    errorType = typeof body.errorType === "string" ? body.errorType : "";
    errorMessage = typeof body.errorMessage === "string" ? body.errorMessage : text;
  } catch {
    // Not JSON: keep the raw text.
  }
  if (/Task timed out/i.test(errorMessage) || errorType === "Sandbox.Timedout") {
    return sandboxFailure(
      sandboxError("timeout", "the sandbox function timed out; the code took too long"),
      limits,
    );
  }
  if (/OutOfMemory|out of memory|signal: killed/i.test(`${errorType} ${errorMessage}`)) {
    return sandboxFailure(
      sandboxError(
        "memory_limit",
        "the sandbox function ran out of memory; the code used too much",
      ),
      limits,
    );
  }
  return sandboxFailure(
    sandboxError(
      "internal",
      `the sandbox function failed (${errorType || "error"}): ${errorMessage.slice(0, 300)}`,
    ),
    limits,
  );
}

/** Invoke itself failed: throttled or a service error (retry), or a request Lambda refuses. */
function translateInvokeError(error: unknown): Error {
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : String(error);
  if (name === "RequestTooLargeException") {
    return new StepError(
      "sandbox_request_too_large",
      "the code, its inputs and its files are too large for one sandbox call on Lambda (a synchronous invoke carries 6 MB, about 4 MiB of files by reference): pass smaller files, or split a large one in an earlier step",
    );
  }
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata
    ?.httpStatusCode;
  if (
    (typeof name === "string" && RETRYABLE_ERRORS.has(name)) ||
    status === undefined ||
    status >= 500 ||
    status === 429
  ) {
    return new RetryableError(
      "sandbox_unavailable",
      `the sandbox function cannot be invoked now: ${message}`,
      undefined,
      error,
    );
  }
  // A configuration error (no such function, no permission): a bug of the deployment.
  return error instanceof Error ? error : new Error(message);
}
