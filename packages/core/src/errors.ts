/**
 * One error hierarchy for the whole core. Every error has a stable `code` (sent to
 * clients and used in metrics) and a `kind` that says what it means for the caller;
 * the API maps kinds to HTTP statuses in one place, and the worker maps them to
 * retry decisions in `classifyFailure`.
 */

export type ErrorKind =
  | "invalid" // valid JSON, invalid content (422)
  | "malformed" // not what the schema says (400)
  | "unauthorized" // no or bad credentials (401)
  | "forbidden" // credentials fine, action not allowed (403)
  | "not_found" // (404), also for another tenant's ids
  | "conflict" // a condition failed or the name exists (409)
  | "too_large" // (413)
  | "rate_limited" // (429), with retryAfterSeconds
  | "step" // a step failed in a way the plan can recover from (recorded, replanned)
  | "retryable" // transient: try the same thing again later
  | "internal"; // a bug or an unknown failure (500)

export interface StackVMErrorOptions {
  details?: unknown;
  cause?: unknown;
  retryAfterSeconds?: number;
}

/** The base of every error the core throws on purpose. */
export class StackVMError extends Error {
  override readonly name: string = "StackVMError";
  readonly details: unknown;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    options: StackVMErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Input that parses but breaks a rule: a plan that fails validation, an unknown tool. */
export class ValidationError extends StackVMError {
  override readonly name = "ValidationError";
  constructor(code: string, message: string, details?: unknown) {
    super("invalid", code, message, { details });
  }
}

/** Input that does not have the required shape. */
export class MalformedError extends StackVMError {
  override readonly name = "MalformedError";
  constructor(message: string, details?: unknown) {
    super("malformed", "malformed_request", message, { details });
  }
}

export class NotFoundError extends StackVMError {
  override readonly name = "NotFoundError";
  constructor(what: string, id: string) {
    super("not_found", "not_found", `${what} '${id}' does not exist`);
  }
}

/** A conditional write failed, or a name is taken. */
export class ConflictError extends StackVMError {
  override readonly name = "ConflictError";
  constructor(message: string, code = "conflict", cause?: unknown) {
    super("conflict", code, message, { cause });
  }
}

export class UnauthorizedError extends StackVMError {
  override readonly name = "UnauthorizedError";
  constructor(message = "A valid API key is required: send 'Authorization: Bearer <key>'.") {
    super("unauthorized", "unauthorized", message);
  }
}

export class ForbiddenError extends StackVMError {
  override readonly name = "ForbiddenError";
  constructor(message: string, code = "forbidden") {
    super("forbidden", code, message);
  }
}

export class TooLargeError extends StackVMError {
  override readonly name = "TooLargeError";
  constructor(message: string) {
    super("too_large", "too_large", message);
  }
}

/**
 * The store refused a record for what it holds, not for a condition: a value it
 * cannot hold (the item store's rules answer a `TypeError`, `store/item-rules.ts`),
 * which the same write would meet on every try. Raised at the store's boundary
 * (`TaskStore.putCommit`), so that a `TypeError` anywhere else stays a bug.
 */
export class StoreRefusedError extends StackVMError {
  override readonly name = "StoreRefusedError";
  constructor(message: string, cause?: unknown) {
    super("invalid", "store_refused", message, { cause });
  }
}

export class RateLimitedError extends StackVMError {
  override readonly name = "RateLimitedError";
  constructor(message: string, retryAfterSeconds: number, code = "rate_limited") {
    super("rate_limited", code, message, { retryAfterSeconds });
  }
}

/**
 * A step failed in a way that the plan may recover from: bad tool input, a tool
 * that answered an error, a sandbox error, an unknown reference at run time.
 * Recorded as an `error` commit; triggers a plan update.
 */
export class StepError extends StackVMError {
  override readonly name = "StepError";
  constructor(code: string, message: string, details?: unknown, cause?: unknown) {
    super("step", code, message, { details, cause });
  }
}

/** A transient failure: the same work may succeed later (LLM 429/5xx, timeouts). */
export class RetryableError extends StackVMError {
  override readonly name = "RetryableError";
  constructor(code: string, message: string, retryAfterSeconds?: number, cause?: unknown) {
    super("retryable", code, message, { retryAfterSeconds, cause });
  }
}

/**
 * A task's token or cost budget is spent. Thrown before an LLM call, so nothing
 * more is spent; kind "forbidden" (not "step") because a plan update would only
 * spend more.
 */
export class BudgetExceededError extends StackVMError {
  override readonly name = "BudgetExceededError";
  constructor(message: string, details?: unknown) {
    super("forbidden", "budget_exceeded", message, { details });
  }
}

/** What to do about a failure, decided in one place: `classifyFailure`. */
export type FailureDecision =
  | { action: "retry"; afterSeconds?: number }
  | { action: "record"; code: string; message: string }
  | { action: "fail"; code: string; message: string };

/**
 * Classifies any thrown value by its `kind`/`code` (not `instanceof` alone, so that
 * errors crossing package or realm boundaries classify the same way).
 *
 * @example
 * classifyFailure(new RetryableError("llm_rate_limited", "429", 3)) // { action: "retry", afterSeconds: 3 }
 */
export function classifyFailure(error: unknown): FailureDecision {
  const e = error as Partial<StackVMError> | null | undefined;
  const message = e && typeof e.message === "string" ? e.message : String(error);
  switch (e?.kind) {
    case "retryable":
    case "rate_limited":
      return e.retryAfterSeconds === undefined
        ? { action: "retry" }
        : { action: "retry", afterSeconds: e.retryAfterSeconds };
    case "step":
    case "invalid":
    case "malformed":
    case "forbidden":
    case "too_large":
      return { action: "record", code: e.code ?? "step_error", message };
    case "not_found":
    case "conflict":
    case "unauthorized":
      return { action: "fail", code: e.code ?? "error", message };
    default:
      return { action: "retry" };
  }
}

/** True when the value is a StackVMError of the given kind, across realms. */
export function isErrorKind(error: unknown, kind: ErrorKind): boolean {
  return (error as { kind?: unknown } | null)?.kind === kind && error instanceof Error;
}
