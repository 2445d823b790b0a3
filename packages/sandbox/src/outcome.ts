/**
 * What an engine hands back to the runner, and the host-side checks that every
 * engine applies to what comes out of a guest: output cut at the limit, files
 * checked against the protocol and the limits. Nothing from a guest is trusted.
 */
import {
  type ParsedSandboxRequest,
  type SandboxError,
  SandboxFile,
  type SandboxLimits,
  type SandboxOutputFile,
  sandboxError,
} from "@stackvm/core/sandbox-protocol";

/** One run as an engine saw it. */
export interface RunOutcome {
  result: unknown;
  stdout: string;
  stderr: string;
  truncated: boolean;
  files: SandboxOutputFile[];
  error: SandboxError | null;
}

/**
 * The outcome of a run that failed: no result, the output as it stands when this
 * is called (none without a collector), and the files already checked.
 *
 * @example
 * return failedOutcome(timeoutError(limits), output);
 */
export function failedOutcome(
  error: SandboxError,
  output?: OutputCollector,
  files: SandboxOutputFile[] = [],
): RunOutcome {
  return {
    result: null,
    stdout: output?.stdout ?? "",
    stderr: output?.stderr ?? "",
    truncated: output?.truncated ?? false,
    files,
    error,
  };
}

/** An interpreter behind the runner: JavaScript in QuickJS, Python in Pyodide. */
export interface Engine {
  run(request: ParsedSandboxRequest, limits: SandboxLimits): Promise<RunOutcome>;
  /** Ends every worker and child process of the engine. */
  close(): Promise<void>;
}

/**
 * stdout and stderr of one run, together at most `limit` UTF-8 bytes. What comes
 * past the limit is cut at a character boundary and marks the run as truncated.
 */
export class OutputCollector {
  #left: number;
  #parts = { stdout: [] as string[], stderr: [] as string[] };
  truncated = false;

  constructor(readonly limit: number) {
    this.#left = limit;
  }

  /** Adds text; false once the limit is passed (the caller then stops the run). */
  add(stream: "stdout" | "stderr", text: string): boolean {
    if (this.truncated) return false;
    const bytes = Buffer.byteLength(text);
    if (bytes <= this.#left) {
      this.#left -= bytes;
      this.#parts[stream].push(text);
      return true;
    }
    this.#parts[stream].push(cutUtf8(text, this.#left));
    this.#left = 0;
    this.truncated = true;
    return false;
  }

  get stdout(): string {
    return this.#parts.stdout.join("");
  }

  get stderr(): string {
    return this.#parts.stderr.join("");
  }
}

/** The longest prefix of `text` that fits in `bytes` UTF-8 bytes, never splitting a character. */
export function cutUtf8(text: string, bytes: number): string {
  const encoded = Buffer.from(text);
  if (encoded.length <= bytes) return text;
  let end = bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && ((encoded[end] ?? 0) & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString();
}

/** The message of a run stopped at the output limit. */
export function outputLimitError(limits: SandboxLimits): SandboxError {
  return sandboxError(
    "output_limit",
    `the code printed more than ${limits.output_bytes} bytes (stdout and stderr together) and was stopped; print less (counts, samples, summaries), or write data to a file`,
  );
}

/** The message of a run stopped at its deadline. */
export function timeoutError(limits: SandboxLimits): SandboxError {
  return sandboxError(
    "timeout",
    `the code ran past its time limit of ${limits.time_ms} ms and was stopped; look for an endless loop, or do less work per run`,
  );
}

/** The message of a run stopped at its memory limit. */
export function memoryLimitError(limits: SandboxLimits): SandboxError {
  return sandboxError(
    "memory_limit",
    `the code used more than its memory limit of ${limits.memory_mib} MiB and was stopped; process the data in smaller pieces`,
  );
}

/**
 * Checks files that a guest says it wrote: each must be a valid protocol file,
 * and together within the count and size limits.
 */
export function checkFiles(
  raw: unknown,
  limits: SandboxLimits,
): { files: SandboxOutputFile[]; error: SandboxError | null } {
  const parsed = SandboxFile.array().safeParse(raw);
  if (!parsed.success) {
    return {
      files: [],
      error: sandboxError(
        "file_limit",
        `the files written cannot be returned: ${parsed.error.issues[0]?.message ?? "invalid"}`,
      ),
    };
  }
  const files: SandboxOutputFile[] = [];
  let total = 0;
  for (const file of parsed.data) {
    const size =
      file.encoding === "utf8"
        ? Buffer.byteLength(file.content)
        : Buffer.from(file.content, "base64").length;
    total += size;
    if (files.length >= limits.max_files || total > limits.files_bytes) {
      return {
        files,
        error: sandboxError(
          "file_limit",
          `the code wrote ${parsed.data.length} files of ${parsed.data.reduce((n, f) => n + f.content.length, 0)} bytes or more; the limits are ${limits.max_files} files and ${limits.files_bytes} bytes in all: write fewer or smaller files`,
        ),
      };
    }
    files.push({ ...file, size });
  }
  return { files, error: null };
}
