/**
 * The knowledge port on AWS: a synchronous Lambda `Invoke` (RequestResponse) of
 * the knowledge function, which holds LanceDB and the PDF reader so that the
 * step worker does not. The protocol is core's (`knowledgeClient`); Lambda's
 * own failures are translated here, as the sandbox adapter does: throttling,
 * service errors and a function that crashed or timed out are retried (the
 * step or the ingest message comes back), a request Lambda refuses as too
 * large is a step error.
 */
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { type KnowledgePort, RetryableError, StepError } from "@stackvm/core";
// Its own entry: core's barrel does not re-export the protocol, since every
// module the barrel reaches loads with each worker's start, and this one is
// only needed from the first search on (docs/deploy.md, "Cold starts").
import { type KnowledgeRequest, knowledgeClient } from "@stackvm/core/knowledge-protocol";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * `KnowledgePort` over Lambda Invoke of the knowledge function.
 *
 * @example
 * const knowledge = lambdaKnowledge(lambdaClient(region), config.knowledgeFunction);
 * const { chunks } = await knowledge.chunks(scope, "refund policy", 5);
 */
export function lambdaKnowledge(
  lambda: Pick<LambdaClient, "send">,
  functionName: string,
): KnowledgePort {
  return knowledgeClient(async (request: KnowledgeRequest) => {
    let output: { Payload?: Uint8Array; FunctionError?: string };
    try {
      output = await lambda.send(
        new InvokeCommand({
          FunctionName: functionName,
          InvocationType: "RequestResponse",
          Payload: encoder.encode(JSON.stringify(request)),
        }),
      );
    } catch (error) {
      throw translateInvokeError(error);
    }
    const text = output.Payload ? decoder.decode(output.Payload) : "";
    if (output.FunctionError) {
      // The handler answers every error of ours; this is a crash, a timeout or memory.
      throw new RetryableError(
        "knowledge_function_failed",
        `the knowledge function failed (${output.FunctionError}): ${text.slice(0, 300)}`,
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  });
}

/** Invoke itself failed: throttled or a service error (retry), or a request Lambda refuses. */
function translateInvokeError(error: unknown): Error {
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : String(error);
  if (name === "RequestTooLargeException") {
    return new StepError(
      "knowledge_request_too_large",
      "the search is too large for one call to the knowledge function (6 MB): ask a shorter query",
    );
  }
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata
    ?.httpStatusCode;
  if (
    status === undefined ||
    status >= 500 ||
    status === 429 ||
    name === "TooManyRequestsException"
  ) {
    return new RetryableError(
      "knowledge_unavailable",
      `the knowledge function cannot be invoked now: ${message}`,
      undefined,
      error,
    );
  }
  // A configuration error (no such function, no permission): a bug of the deployment.
  return error instanceof Error ? error : new Error(message);
}
