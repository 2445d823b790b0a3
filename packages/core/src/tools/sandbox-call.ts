/**
 * The worker's side of one sandbox run, shared by `run_code`, `code_task` and
 * code tools: send the code through the sandbox port with the namespace's limits,
 * store the code, stdout, stderr and files in the blob store (content-addressed),
 * and describe the run for the commit by references and hashes. The sandbox
 * itself never touches storage.
 */
import { RetryableError, StepError } from "../errors";
import type { FileSources, SandboxFileEntry } from "../files/file-inputs";
import type { BlobRef } from "../ports/blobs";
import { SANDBOX_PROTOCOL_VERSION } from "../sandbox/files";
import type {
  SandboxError,
  SandboxFile,
  SandboxLanguage,
  SandboxLimits,
  SandboxResponse,
} from "../sandbox/protocol";
import type { ToolContext } from "./tool";

/** A file the code wrote, as the commit and the plan's variables see it. */
export interface StoredFile {
  path: string;
  size: number;
  sha256: string;
  /** What the console and the blob route answer it as (from its extension). */
  content_type: string;
  ref: BlobRef;
  /** The text itself, for UTF-8 files up to 16 KiB, so that a plan can use it directly. */
  text?: string;
}

/** One run as the commit records it: references and hashes, not the bytes. */
export interface SandboxRecord {
  language: SandboxLanguage;
  code: BlobRef;
  stdout: BlobRef | null;
  stderr: BlobRef | null;
  files: StoredFile[];
  error: SandboxError | null;
  truncated: boolean;
  duration_ms: number;
  limits: SandboxLimits;
}

export interface SandboxCall {
  language: SandboxLanguage;
  code: string;
  inputs?: Record<string, unknown>;
  /** Inline files, and references whose bytes the worker reads first (`files/file-refs.ts`). */
  files?: SandboxFileEntry[];
}

export interface SandboxRun {
  response: SandboxResponse;
  record: SandboxRecord;
  files: StoredFile[];
}

const INLINE_TEXT_BYTES = 16 * 1024;
const encoder = new TextEncoder();

/**
 * Runs code in the sandbox and stores what it made. A failed run is returned, not
 * thrown (`code_task` feeds the error back to the model); `sandboxFailureError`
 * turns it into the step's error.
 *
 * @throws whatever the sandbox port throws when the sandbox cannot be reached.
 */
export async function callSandbox(context: ToolContext, call: SandboxCall): Promise<SandboxRun> {
  const given: SandboxFile[] = call.files?.length
    ? await (await import("../files/file-refs")).resolveSandboxFiles(
        call.files,
        fileSources(context),
      )
    : [];
  const response = await context.sandbox.run({
    v: SANDBOX_PROTOCOL_VERSION,
    language: call.language,
    code: call.code,
    inputs: call.inputs ?? {},
    files: given,
    limits: context.namespace.sandbox_limits ?? {},
  });
  const put = (text: string, contentType: string) =>
    context.blobs.put(context.blobPrefix, encoder.encode(text), contentType);
  const [code, stdout, stderr, files] = await Promise.all([
    put(call.code, call.language === "python" ? "text/x-python" : "text/javascript"),
    response.stdout ? put(response.stdout, "text/plain; charset=utf-8") : null,
    response.stderr ? put(response.stderr, "text/plain; charset=utf-8") : null,
    Promise.all(response.files.map((file) => storeFile(context, file))),
  ]);
  const record: SandboxRecord = {
    language: call.language,
    code,
    stdout,
    stderr,
    files: files.map(({ text: _, ...file }) => file),
    error: response.error,
    truncated: response.truncated,
    duration_ms: response.duration_ms,
    limits: response.limits,
  };
  return { response, record, files };
}

async function storeFile(
  context: ToolContext,
  file: SandboxResponse["files"][number],
): Promise<StoredFile> {
  const bytes =
    file.encoding === "utf8"
      ? encoder.encode(file.content)
      : Uint8Array.from(Buffer.from(file.content, "base64"));
  const type = contentType(file.path, file.encoding);
  const ref = await context.blobs.put(context.blobPrefix, bytes, type);
  const stored: StoredFile = {
    path: file.path,
    size: ref.size,
    sha256: ref.sha256,
    content_type: type,
    ref,
  };
  if (file.encoding === "utf8" && bytes.byteLength <= INLINE_TEXT_BYTES) stored.text = file.content;
  return stored;
}

const TYPES: Record<string, string> = {
  csv: "text/csv",
  json: "application/json",
  md: "text/markdown",
  html: "text/html",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pdf: "application/pdf",
};

function contentType(path: string, encoding: "utf8" | "base64"): string {
  const known = TYPES[path.split(".").pop()?.toLowerCase() ?? ""];
  if (known) return known;
  return encoding === "utf8" ? "text/plain; charset=utf-8" : "application/octet-stream";
}

/** Where the references of a run's files are read: the tenant's files, the task's blobs. */
export function fileSources(context: ToolContext): FileSources {
  return {
    tenantId: context.tenantId,
    blobs: context.blobs,
    blobPrefix: context.blobPrefix,
    ...(context.files ? { files: context.files } : {}),
  };
}

/**
 * The error of a failed run, for the step: retryable sandbox failures (a crash of
 * the sandbox itself) are `RetryableError`, so the worker tries the step again;
 * everything else is a `StepError` that the plan can recover from.
 *
 * @example
 * sandboxFailureError(run, "run_code").code // "sandbox_timeout"
 */
export function sandboxFailureError(run: SandboxRun, what: string): StepError | RetryableError {
  const error = run.response.error ?? {
    code: "internal",
    message: "the sandbox reported no error",
    retryable: false,
  };
  const code = `sandbox_${error.code}`;
  const message = `${what}: the ${run.record.language} code failed: ${error.message}`;
  if (error.retryable) return new RetryableError(code, message);
  return new StepError(code, message, {
    sandbox: run.record,
    traceback: error.traceback,
    stdout_tail: run.response.stdout.slice(-2000),
    stderr_tail: run.response.stderr.slice(-2000),
  });
}
