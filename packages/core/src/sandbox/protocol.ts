/**
 * The sandbox wire protocol, version 1: what the worker sends to the sandbox
 * function (a Lambda `Invoke` on AWS, a local child process in local mode) and
 * what comes back. Strict and versioned like the queue message, with the limits
 * in the schema, so that a request the sandbox cannot honour is refused before
 * any code runs.
 */
import * as z from "zod";
import {
  MAX_CODE_CHARS,
  SANDBOX_PROTOCOL_VERSION,
  SandboxFile as sandboxFile,
  SandboxLanguage as sandboxLanguage,
} from "./files";

export { MAX_CODE_CHARS, SANDBOX_PROTOCOL_VERSION };

// The protocol's readers (the sandbox, the worker's call) take the schemas
// themselves: built when this module loads, as the rest of the protocol is.
export const SandboxLanguage = sandboxLanguage();
export type SandboxLanguage = z.infer<typeof SandboxLanguage>;
export const SandboxFile = sandboxFile();
export type SandboxFile = z.infer<typeof SandboxFile>;

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * What one run may use. The schema bounds are what the protocol can carry (Lambda
 * answers at most 6 MB); the sandbox function's configuration is the ceiling
 * actually enforced, and a namespace may only ask for less.
 */
export const SandboxLimits = z
  .object({
    /** Wall-clock time of the code, from its first instruction. */
    time_ms: z.number().int().min(100).max(900_000),
    /** Memory the code's interpreter may grow to. */
    memory_mib: z.number().int().min(32).max(10_240),
    /** stdout and stderr together, in UTF-8 bytes; also the most the result's JSON may take. */
    output_bytes: z
      .number()
      .int()
      .min(KIB)
      .max(2 * MIB),
    /** How many files of the working folder come back. */
    max_files: z.number().int().min(0).max(100),
    /** The bytes of all returned files together. */
    files_bytes: z
      .number()
      .int()
      .min(0)
      .max(2 * MIB),
  })
  .strict();
export type SandboxLimits = z.infer<typeof SandboxLimits>;

/** Limits as a request or a namespace asks for them: any subset, each capped by the ceiling. */
export const SandboxLimitsRequest = SandboxLimits.partial();
export type SandboxLimitsRequest = z.infer<typeof SandboxLimitsRequest>;

/** 10 s, 256 MiB, 1 MiB of output, 20 files of 2 MiB in all. */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  time_ms: 10_000,
  memory_mib: 256,
  output_bytes: MIB,
  max_files: 20,
  files_bytes: 2 * MIB,
});

/**
 * The limits of one run: each asked value, never above the ceiling; what is not
 * asked takes the default, also capped by the ceiling.
 *
 * @example
 * resolveSandboxLimits({ time_ms: 60_000 }, DEFAULT_SANDBOX_LIMITS).time_ms // 10_000
 */
export function resolveSandboxLimits(
  asked: SandboxLimitsRequest | undefined,
  ceiling: SandboxLimits,
): SandboxLimits {
  const pick = (key: keyof SandboxLimits) =>
    Math.min(asked?.[key] ?? DEFAULT_SANDBOX_LIMITS[key], ceiling[key]);
  return {
    time_ms: pick("time_ms"),
    memory_mib: pick("memory_mib"),
    output_bytes: pick("output_bytes"),
    max_files: pick("max_files"),
    files_bytes: pick("files_bytes"),
  };
}

/**
 * The limits of a request as the callers of the sandbox see them, before the
 * sandbox has checked it: an unreadable `limits` asks for nothing. Used to
 * describe a run that failed before the sandbox answered.
 */
export function requestedSandboxLimits(
  request: { limits?: unknown },
  ceiling: SandboxLimits,
): SandboxLimits {
  const asked = SandboxLimitsRequest.safeParse(request.limits ?? {});
  return resolveSandboxLimits(asked.success ? asked.data : {}, ceiling);
}

/** A file of the answer: as `SandboxFile`, with its size in bytes. */
export const SandboxOutputFile = SandboxFile.extend({ size: z.number().int().min(0) }).strict();
export type SandboxOutputFile = z.infer<typeof SandboxOutputFile>;

/**
 * The most the inputs and input files of one request weigh, as JSON: 32 MiB of
 * file bytes in base64 with room for the inputs. What reaches a sandbox is
 * bounded first by its transport: the local sandbox's pipe takes all of it; a
 * synchronous Lambda invoke carries 6 MB, so there a run gets about 4 MiB of
 * files (`LambdaSandbox` says so before it sends).
 */
export const MAX_REQUEST_INPUT_BYTES = 48 * MIB;

/**
 * One run: `code` in `language`, with `inputs` as variables (every key that is an
 * identifier in both languages; all of them under `inputs`) and `files` in the
 * working folder.
 */
export const SandboxRequest = z
  .object({
    v: z.literal(SANDBOX_PROTOCOL_VERSION),
    language: SandboxLanguage,
    code: z
      .string()
      .min(1, "code is empty")
      .max(MAX_CODE_CHARS, `code is longer than ${MAX_CODE_CHARS} characters`),
    inputs: z.record(z.string(), z.unknown()).default({}),
    files: z.array(SandboxFile).max(100).default([]),
    limits: SandboxLimitsRequest.default({}),
  })
  .strict()
  .superRefine((request, ctx) => {
    const size = Buffer.byteLength(JSON.stringify([request.inputs, request.files]));
    if (size > MAX_REQUEST_INPUT_BYTES) {
      ctx.addIssue({
        code: "custom",
        path: ["inputs"],
        message: `inputs and files weigh ${size} bytes, over ${MAX_REQUEST_INPUT_BYTES}: pass fewer or smaller files (the sandbox has no network to fetch them)`,
      });
    }
  });
export type SandboxRequest = z.input<typeof SandboxRequest>;
export type ParsedSandboxRequest = z.output<typeof SandboxRequest>;

/**
 * Why a run failed. Stable codes; `retryable` says whether sending the same
 * request again can help (a crash of the sandbox itself can; a timeout of the
 * code cannot, its code must change).
 */
export const SandboxErrorCode = z.enum([
  "invalid_request",
  "syntax_error",
  "runtime_error",
  "timeout",
  "memory_limit",
  "output_limit",
  "file_limit",
  "result_not_json",
  "refused",
  "unavailable",
  "internal",
]);
export type SandboxErrorCode = z.infer<typeof SandboxErrorCode>;

export const SandboxError = z
  .object({
    code: SandboxErrorCode,
    message: z.string(),
    retryable: z.boolean(),
    /** The guest's stack trace or traceback, its own frames only. */
    traceback: z.string().optional(),
  })
  .strict();
export type SandboxError = z.infer<typeof SandboxError>;

/**
 * The answer. `error` is null when the code ran to its end; output and files made
 * before a failure come back too, since they help to fix the code.
 */
export const SandboxResponse = z
  .object({
    v: z.literal(SANDBOX_PROTOCOL_VERSION),
    /** The value of the last expression, or of `return` / `result`, as JSON; null on error. */
    result: z.unknown(),
    stdout: z.string(),
    stderr: z.string(),
    /** True when stdout/stderr were cut at `limits.output_bytes`. */
    truncated: z.boolean(),
    files: z.array(SandboxOutputFile),
    error: SandboxError.nullable(),
    duration_ms: z.number().min(0),
    /** The limits the run had, after the ceiling. */
    limits: SandboxLimits,
  })
  .strict();
export type SandboxResponse = z.infer<typeof SandboxResponse>;

/** Error codes that a resend of the same request may get past. */
const RETRYABLE: ReadonlySet<SandboxErrorCode> = new Set(["unavailable", "internal"]);

/**
 * Builds the error part of an answer, with `retryable` decided in this one place.
 *
 * @example
 * sandboxError("timeout", "the code ran past 10000 ms").retryable // false
 */
export function sandboxError(
  code: SandboxErrorCode,
  message: string,
  traceback?: string,
): SandboxError {
  return traceback === undefined
    ? { code, message, retryable: RETRYABLE.has(code) }
    : { code, message, retryable: RETRYABLE.has(code), traceback };
}

/**
 * A whole answer for a run that failed before or outside the code: a bad request,
 * a sandbox that could not be reached or crashed. Adapters use it to translate
 * transport failures into the protocol.
 *
 * @example
 * sandboxFailure(sandboxError("internal", "the sandbox crashed"), DEFAULT_SANDBOX_LIMITS).error?.retryable // true
 */
export function sandboxFailure(error: SandboxError, limits: SandboxLimits): SandboxResponse {
  return {
    v: SANDBOX_PROTOCOL_VERSION,
    result: null,
    stdout: "",
    stderr: "",
    truncated: false,
    files: [],
    error,
    duration_ms: 0,
    limits,
  };
}

/** Names that are not variables in JavaScript or Python, or that the sandbox itself defines. */
const NOT_A_VARIABLE = new Set(
  [
    // JavaScript reserved words and literals
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await arguments eval undefined NaN Infinity",
    // Python keywords
    "False None True and as assert async def del elif except global is lambda nonlocal not or pass raise",
    // the sandbox's own names
    "inputs files console result print",
  ]
    .join(" ")
    .split(" "),
);

/**
 * True when an input key becomes a variable of its own: an ASCII identifier that
 * is no keyword of either language, no dunder name and no name of the sandbox. Other keys are
 * still in `inputs`.
 *
 * @example
 * isInputVariable("rows") // true
 * isInputVariable("class") // false: use inputs["class"]
 */
export function isInputVariable(name: string): boolean {
  // Dunder names (`__proto__`, `__builtins__`) would change the interpreter, not add a variable.
  return (
    /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name) &&
    !name.startsWith("__") &&
    !NOT_A_VARIABLE.has(name)
  );
}
