/**
 * Files by reference: what a plan passes to the sandbox instead of the bytes.
 *
 * - `{"$file": "file_…"}`: a file the tenant uploaded (`POST /v1/files`); a
 *   task's input names one the same way, and the task start checks it and
 *   adds its `filename`, `content_type` and `size` (`resolveInputFiles`).
 * - `{"path", "sha256"}` (and the `size`, `ref`, `text` beside them): a file a
 *   step of the same task wrote, as `${run.files.0}` holds it. The bytes are
 *   the blob the worker stored under the task's prefix, content-addressed.
 *
 * The worker reads the bytes and hands them to the sandbox in its request
 * (`resolveSandboxFiles`), so the plan's variables and the commit carry only
 * the reference. The sandbox still has no network and no storage.
 *
 * The inputs' schemas and the check for a reference are `file-inputs.ts`, which
 * a step's start loads; this file, which reads the bytes, loads on first use.
 */
import { StepError, ValidationError } from "../errors";
import type { SandboxFile } from "../sandbox/files";
import {
  type FileSources,
  isFileReference,
  MAX_SANDBOX_FILE_BYTES,
  type SandboxFileEntry,
  type StepFileRef,
  type UploadedFileRef,
} from "./file-inputs";
import type { FileRecord } from "./records";
import { fileBlobPrefix } from "./records";

export type { FileReader } from "./file-inputs";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A file of the run as a prompt names it: its path, and its size when known. */
export function describeFiles(files: readonly SandboxFile[]): string {
  if (files.length === 0) return "";
  const lines = files.map((file) => {
    const bytes =
      file.encoding === "base64"
        ? Math.floor((file.content.length * 3) / 4)
        : Buffer.byteLength(file.content);
    return `- ${file.path} (${bytes} bytes${file.encoding === "base64" ? ", binary" : ", text"})`;
  });
  return `Files in the working folder (read them by these paths):\n${lines.join("\n")}`;
}

/** Text when the bytes are UTF-8 without NUL (JavaScript's `files.read` then answers a string), else base64. */
function sandboxFile(path: string, bytes: Uint8Array): SandboxFile {
  if (!bytes.includes(0)) {
    try {
      return { path, encoding: "utf8", content: utf8.decode(bytes) };
    } catch {
      // not UTF-8: sent as bytes
    }
  }
  return { path, encoding: "base64", content: Buffer.from(bytes).toString("base64") };
}

/**
 * The files of a sandbox request with every reference read: inline files as
 * they are, references as their bytes. A reference to a missing or deleted
 * file, or another tenant's, fails the step with `file_not_found`; files over
 * `MAX_SANDBOX_FILE_BYTES` in all with `files_too_large`. Nothing is read
 * twice: two entries of the same file share the bytes.
 */
export async function resolveSandboxFiles(
  entries: readonly SandboxFileEntry[],
  sources: FileSources,
  maxBytes = MAX_SANDBOX_FILE_BYTES,
): Promise<SandboxFile[]> {
  let total = 0;
  const out: SandboxFile[] = [];
  for (const entry of entries) {
    if ("encoding" in entry) {
      total +=
        entry.encoding === "base64"
          ? Math.floor((entry.content.length * 3) / 4)
          : Buffer.byteLength(entry.content);
      out.push(entry);
    } else {
      const { path, bytes } = await readEntry(entry, sources);
      total += bytes.byteLength;
      if (total > maxBytes) break;
      out.push(sandboxFile(path, bytes));
    }
    if (total > maxBytes) break;
  }
  if (total > maxBytes) {
    throw new StepError(
      "files_too_large",
      `the files of this run weigh more than ${maxBytes} bytes in all, the most one sandbox run takes: pass fewer or smaller files (split a large one in an earlier step)`,
    );
  }
  return out;
}

async function readEntry(
  entry: UploadedFileRef | StepFileRef,
  sources: FileSources,
): Promise<{ path: string; bytes: Uint8Array }> {
  if ("$file" in entry) {
    const record = sources.files ? await sources.files.get(sources.tenantId, entry.$file) : null;
    if (!record) {
      throw new StepError(
        "file_not_found",
        `file '${entry.$file.slice(0, 80)}' does not exist (deleted, or never uploaded): upload it again with POST /v1/files and pass the new id`,
      );
    }
    if (record.status !== "ready") {
      throw new StepError(
        "file_not_ready",
        `file '${record.file_id}' is ${record.status}: ${record.error?.message ?? "its presigned upload has not been taken in (read it with GET /v1/files/{id} after the PUT)"}`,
      );
    }
    const bytes = await sources.blobs.get(
      fileBlobPrefix(sources.tenantId, record.file_id),
      record.sha256,
    );
    if (!bytes) {
      throw new StepError(
        "file_not_found",
        `file '${record.file_id}' has no bytes any more (it is being deleted)`,
      );
    }
    return { path: entry.path ?? safePath(record.filename), bytes };
  }
  const bytes = await sources.blobs.get(sources.blobPrefix, entry.sha256);
  if (!bytes) {
    throw new StepError(
      "file_not_found",
      `no file with sha256 ${entry.sha256} was written by a step of this task: pass a file from this task's own steps (\${run.files.0}), or upload it with POST /v1/files`,
    );
  }
  return { path: entry.path, bytes };
}

/** A file name as a working-folder path: its characters that a path refuses replaced. */
function safePath(filename: string): string {
  const clean = filename.replace(/[/\\\0]/g, "_");
  return clean === "." || clean === ".." || clean === "" ? "file" : clean.slice(0, 200);
}

/**
 * A task's inputs with each top-level `{"$file": id}` checked (the file is the
 * tenant's and ready) and described: `{"$file", "filename", "content_type",
 * "size"}`, so that the planner knows what it is and a step passes it on in
 * `files`. A missing or another tenant's file is 422 `file_not_found`.
 */
export async function resolveInputFiles(
  inputs: Record<string, unknown>,
  ready: (fileId: string) => Promise<FileRecord>,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(inputs)) {
    if (!isFileReference(value)) {
      out[name] = value;
      continue;
    }
    const id = value.$file;
    if (typeof id !== "string" || Object.keys(value).length !== 1) {
      throw new ValidationError(
        "invalid_file_reference",
        `input '${name}': a file reference is {"$file": "file_…"} and nothing else, the id POST /v1/files answered`,
      );
    }
    let record: FileRecord;
    try {
      record = await ready(id);
    } catch (error) {
      if ((error as { kind?: string }).kind === "not_found") {
        throw new ValidationError(
          "file_not_found",
          `input '${name}': file '${id.slice(0, 80)}' does not exist: upload it with POST /v1/files and pass the id it answers`,
        );
      }
      throw error;
    }
    out[name] = {
      $file: record.file_id,
      filename: record.filename,
      content_type: record.content_type,
      size: record.size,
    };
  }
  return out;
}
