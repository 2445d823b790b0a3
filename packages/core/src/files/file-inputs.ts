/**
 * What a plan or a task's input writes for a file by reference (the forms are
 * in `file-refs.ts`): the schemas of `run_code`'s and `code_task`'s `files`, the
 * ports that read the bytes, and the check that a value is a reference. Apart
 * from the code that reads the bytes, so that a worker's start loads only these.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import type { Blobs } from "../ports/blobs";
import { SandboxFile, SandboxPath } from "../sandbox/files";
import type { FileRecord } from "./records";

/**
 * The most bytes the files of one sandbox run may weigh in all, by reference
 * and inline: what the local sandbox takes over its pipe. On AWS the Lambda
 * invoke carries 6 MB, so there a run takes about 4 MiB of files (base64).
 */
export const MAX_SANDBOX_FILE_BYTES = 32 * 1024 * 1024;

/** An uploaded file by its id, as a `files` entry; `path` defaults to its file name. */
export const UploadedFileRef = buildOnce(() =>
  z
    .object({
      $file: z.string().min(1).max(64).describe("The id `POST /v1/files` answered (file_…)."),
      path: SandboxPath()
        .optional()
        .describe("Where it goes in the working folder; default its file name."),
      filename: z.string().max(255).optional(),
      content_type: z.string().max(200).optional(),
      size: z.number().int().min(0).optional(),
    })
    .strict(),
);
export type UploadedFileRef = z.infer<ReturnType<typeof UploadedFileRef>>;

/** A file an earlier step of the task wrote (`${run.files.0}`), by its hash. */
export const StepFileRef = buildOnce(() =>
  z
    .object({
      path: SandboxPath(),
      sha256: z
        .string()
        .regex(
          /^[0-9a-f]{64}$/,
          "sha256 is the 64 hex digits of the file, as the step's output names them",
        ),
      size: z.number().int().min(0).optional(),
      content_type: z.string().max(200).optional(),
      ref: z.unknown().optional(),
      text: z.string().optional(),
    })
    .strict(),
);
export type StepFileRef = z.infer<ReturnType<typeof StepFileRef>>;

export type SandboxFileEntry = SandboxFile | UploadedFileRef | StepFileRef;

/** The `files` of `run_code` and `code_task`: inline files and references, 100 at most. */
export const SandboxFilesInput = buildOnce(() =>
  z
    .array(z.union([SandboxFile(), UploadedFileRef(), StepFileRef()]))
    .max(100)
    .describe(
      'Files put in the working folder before the code runs: an uploaded file {"$file": "file_…", path?} (a task input that is a file is one: pass "${name}"), a file an earlier step wrote ("${run.files.0}"), or inline {path, encoding: \'utf8\'|\'base64\', content}.',
    ),
);

/** Reads a tenant's uploaded files for the worker. */
export interface FileReader {
  /** The ready file's record, or null when it does not exist (or is another tenant's). */
  get(tenant: string, fileId: string): Promise<FileRecord | null>;
}

/** Where the worker finds the bytes of references. */
export interface FileSources {
  tenantId: string;
  blobs: Blobs;
  /** The task's blob prefix: step files live under it. */
  blobPrefix: string;
  files?: FileReader;
}

/** True for a value shaped as an uploaded-file reference: an object with a `$file` key. */
export function isFileReference(value: unknown): value is { $file: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.hasOwn(value, "$file")
  );
}
