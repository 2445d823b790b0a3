/**
 * Bedrock Runtime's errors as the core's, for chat (Converse) and embeddings
 * (InvokeModel) alike: throttling, 5xx and time-outs are `RetryableError`s that
 * core retries as it does for an OpenAI-compatible server; access denied says
 * to enable model access and which IAM action the role lacks; the other 4xx
 * fail the call with what the service said.
 */
import { RetryableError, StackVMError, StepError } from "@stackvm/core";

/** What an error is about: for messages and codes (`llm_...` or `embedding_...`). */
export interface BedrockCall {
  /** `llm` or `embedding`: the prefix of the error codes. */
  kind: "llm" | "embedding";
  model: string;
  region: string;
  timeoutMs: number;
  /** The settings that name this model, for the hint of a model that is not found. */
  settings: string;
}

/** The fields of an AWS SDK service exception that the translation reads. */
interface ServiceError {
  name: string;
  message: string;
  $metadata?: { httpStatusCode?: number };
  $fault?: "client" | "server";
}

const THROTTLED = new Set([
  "ThrottlingException",
  "ModelNotReadyException",
  "ServiceQuotaExceededException",
  "TooManyRequestsException",
]);
const UNAVAILABLE = new Set([
  "InternalServerException",
  "ServiceUnavailableException",
  "ModelErrorException",
]);
/** The request's signature or keys were refused: the credentials, not the model. */
const BAD_CREDENTIALS = new Set([
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "ExpiredTokenException",
  "IncompleteSignatureException",
  "MissingAuthenticationTokenException",
]);
/** Node's codes for a server that could not be reached or dropped the connection. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** The IAM action and resource in "... is not authorized to perform: X on resource: Y". */
const NOT_AUTHORIZED = /not authorized to perform:\s*(\S+)(?:\s+on resource:\s*(\S+))?/i;

/**
 * Translates what the SDK threw for one call into the core's errors. Errors it
 * does not recognise are returned as they are.
 */
export function translateBedrockError(error: unknown, call: BedrockCall): unknown {
  const e = error as Partial<ServiceError> & { code?: string; $response?: unknown };
  const where = `Bedrock in ${call.region} (model '${call.model}')`;
  const code = (suffix: string) => `${call.kind}_${suffix}`;
  // The SDK's HTTP/2 handler names a stream closed without an answer a TimeoutError:
  // no answer at all is a server that is down, not a slow one.
  if (e?.name === "TimeoutError" && /did not get a response/i.test(e.message ?? "")) {
    return new RetryableError(
      code("unreachable"),
      `${where} could not be reached: the connection closed without an answer (${e.message})`,
      undefined,
      error,
    );
  }
  if (e?.name === "AbortError" || e?.name === "TimeoutError") {
    return new RetryableError(
      code("timeout"),
      `${where} did not answer within ${call.timeoutMs} ms${call.kind === "llm" ? " (LLM_TIMEOUT_MS)" : ""}`,
      undefined,
      error,
    );
  }
  if (unreachable(e)) {
    return new RetryableError(
      code("unreachable"),
      `${where} could not be reached: ${e.message}`,
      undefined,
      error,
    );
  }
  if (e?.name === "CredentialsProviderError") {
    return new StackVMError(
      "unauthorized",
      code("no_credentials"),
      `${where}: no AWS credentials were found (${e.message}). On AWS the function's IAM role gives them; locally set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
      { cause: error },
    );
  }
  const status = e?.$metadata?.httpStatusCode;
  // A 200 whose body is not the answer's JSON: the SDK's deserializer throws a SyntaxError.
  if (e?.name === "SyntaxError" || (status !== undefined && status < 300)) {
    return new RetryableError(
      code("bad_response"),
      `${where} answered a body that could not be read: ${e?.message?.split("\n")[0]}`,
      undefined,
      error,
    );
  }
  if (typeof e?.name !== "string" || status === undefined) return error;
  const message = e.message ?? "";
  const said = `${where} answered ${status} ${e.name}: ${message}`;
  if (THROTTLED.has(e.name) || status === 429) {
    return new RetryableError(code("rate_limited"), said, undefined, error);
  }
  if (e.name === "ModelTimeoutException" || status === 408) {
    return new RetryableError(code("timeout"), said, undefined, error);
  }
  if (UNAVAILABLE.has(e.name) || (status >= 500 && status !== 501)) {
    return new RetryableError(code("server_error"), said, undefined, error);
  }
  if (BAD_CREDENTIALS.has(e.name)) {
    return new StackVMError(
      "unauthorized",
      code("unauthorized"),
      `${said}: the AWS credentials were refused (on AWS, the function's role; locally, your profile or keys)`,
      { cause: error },
    );
  }
  if (e.name === "AccessDeniedException" || status === 403) {
    return new StackVMError("unauthorized", code("forbidden"), accessDenied(said, message, call), {
      cause: error,
    });
  }
  if (e.name === "ResourceNotFoundException" || status === 404) {
    return new StackVMError(
      "not_found",
      code("model_not_found"),
      `${said}: check that '${call.model}' (${call.settings}) is a Bedrock model id or inference profile offered in ${call.region} (aws bedrock list-foundation-models --region ${call.region})`,
      { cause: error },
    );
  }
  if (/on-demand throughput/i.test(message)) {
    return new StepError(
      code("bad_request"),
      `${said}: this model is served through an inference profile; set ${call.settings} to its id, e.g. 'us.${call.model}' (aws bedrock list-inference-profiles --region ${call.region})`,
      { status, code: e.name },
      error,
    );
  }
  return new StepError(code("bad_request"), said, { status, code: e.name }, error);
}

/** Connection failures: Node's codes, or an HTTP/2 stream cancelled because the connection failed. */
function unreachable(e: { code?: string; cause?: unknown } | undefined): boolean {
  const codes = [e?.code, (e?.cause as { code?: string } | undefined)?.code];
  return codes.some((c) => c !== undefined && NETWORK_CODES.has(c));
}

/** What to do about an AccessDeniedException: enable the model, or give the role the action. */
function accessDenied(said: string, message: string, call: BedrockCall): string {
  const enable = `enable access to '${call.model}' in the Bedrock console (Model access, region ${call.region})`;
  const match = NOT_AUTHORIZED.exec(message);
  if (match !== null) {
    const [, action, resource] = match;
    return `${said}: the role lacks ${action}${resource ? ` on ${resource}` : ""}; the stack grants bedrock:InvokeModel on the models named by ${call.settings} when LLM_PROVIDER=bedrock, so deploy again after changing them (and ${enable} if not done)`;
  }
  return `${said}: ${enable}; the function's role also needs bedrock:InvokeModel on the model's ARN (the stack grants it for ${call.settings} when LLM_PROVIDER=bedrock)`;
}
