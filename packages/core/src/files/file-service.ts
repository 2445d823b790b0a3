/**
 * A tenant's files: uploaded once (multipart, or a presigned PUT straight to
 * the blob store for a large one), then passed to tasks by reference
 * (`{"$file": id}`, `file-refs.ts`) instead of inline content. Everything is
 * checked before anything is written, so a refused upload leaves nothing
 * behind; another tenant's id answers 404, since every key starts with the
 * tenant.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import {
  isErrorKind,
  NotFoundError,
  StackVMError,
  TooLargeError,
  ValidationError,
} from "../errors";
import { randomId, sha256Hex } from "../ids";
import { checkFilename } from "../knowledge/filename";
import { presignedUploads } from "../knowledge/presigned-uploads";
import type { Blobs } from "../ports/blobs";
import type { Clock } from "../ports/clock";
import type { DocumentUploads } from "../ports/uploads";
import type { FileStore } from "../store/file-store";
import {
  type FileInfo,
  type FileRecord,
  fileBlobPrefix,
  fileUploadKey,
  MAX_FILE_BYTES,
  presentFile,
} from "./records";

/** How long a presigned upload URL is valid. */
export const FILE_UPLOAD_URL_SECONDS = 3600;

/** A file id: `file_` and 20 lowercase letters or digits. */
const FILE_ID = /^file_[a-z0-9]{20}$/;

/** True for a string shaped like a file id (anything else is answered 404 unread). */
export const isFileId = (id: unknown): id is string => typeof id === "string" && FILE_ID.test(id);

const newFileId = (): string => `file_${randomId(20)}`;

/** `POST /v1/files` with JSON: ask for a presigned upload URL (built on first use). */
const FilePresignInput = buildOnce(() =>
  z
    .object({
      filename: z.string().min(1).max(255),
      content_type: z.string().min(1).max(200).optional(),
    })
    .strict(),
);

/** An uploaded file, as the API's multipart parser hands it over. */
export interface FileUpload {
  filename: string;
  contentType: string | undefined;
  bytes: Uint8Array;
}

/** The tenant's room for files (`QuotaService`): bytes counted as a file is stored, given back when deleted. */
export interface FileStorage {
  /** Counts the bytes, or refuses (409 `file_storage_full`) when the tenant's files would hold too much. */
  reserveFileBytes(tenant: string, bytes: number): Promise<void>;
  releaseFileBytes(tenant: string, bytes: number): Promise<void>;
}

export interface FileServiceDeps {
  files: FileStore;
  /** The tenant's file storage quota; none: not counted. */
  storage?: FileStorage;
  blobs: Blobs;
  clock: Clock;
  /** The largest file one multipart upload carries (the API's upload body limit). */
  maxUploadBytes: number;
  /** Presigned uploads straight to the blob store; none: refused with a reason. */
  uploads?: DocumentUploads;
  /** The largest file a presigned upload may bring (default 64 MiB). */
  maxFileBytes?: number;
}

const EXTENSION_TYPES: Record<string, string> = {
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  zip: "application/zip",
};

/** A MIME type as `type/subtype`, parameters dropped; refused when it is not one. */
function fileType(declared: string | undefined, filename: string): string {
  const bare = (declared ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (bare !== "" && bare !== "application/octet-stream") {
    if (!/^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(bare)) {
      throw new ValidationError(
        "invalid_content_type",
        `'${bare.slice(0, 80)}' is not a content type: send one like 'text/csv', or none and let the file's extension say`,
      );
    }
    return bare;
  }
  const extension = filename.includes(".") ? filename.split(".").pop()?.toLowerCase() : undefined;
  return (extension && EXTENSION_TYPES[extension]) || "application/octet-stream";
}

/** The tenants' files (see the module's comment). */
export class FileService {
  constructor(private readonly deps: FileServiceDeps) {}

  /** Stores the bytes and answers the file, `ready`. */
  async upload(tenant: string, upload: FileUpload): Promise<FileInfo> {
    const filename = checkFilename(upload.filename);
    const contentType = fileType(upload.contentType, filename);
    if (upload.bytes.byteLength === 0) {
      throw new ValidationError("file_empty", `'${filename}' is empty: upload a file with content`);
    }
    if (upload.bytes.byteLength > this.deps.maxUploadBytes) {
      throw new TooLargeError(
        `'${filename}' is ${upload.bytes.byteLength} bytes, over the ${this.deps.maxUploadBytes} one upload may carry: ask for a presigned upload URL instead (POST /v1/files with JSON {"filename", "content_type"})`,
      );
    }
    const fileId = newFileId();
    // Counted before anything is stored: a crash after this counts bytes never
    // kept (the tenant has less room, never more than its quota).
    const counted = await this.#reserve(tenant, upload.bytes.byteLength);
    const record = this.#record(tenant, fileId, filename, contentType, "multipart");
    try {
      const ref = await this.deps.blobs.put(
        fileBlobPrefix(tenant, fileId),
        upload.bytes,
        contentType,
      );
      record.size = ref.size;
      record.sha256 = ref.sha256;
      record.status = "ready";
      if (counted) record.counted = true;
      await this.deps.files.create(record);
    } catch (error) {
      // Nothing is left of a refused upload: not its bytes, nor their count.
      await this.deps.blobs.deletePrefix(fileBlobPrefix(tenant, fileId));
      if (counted) await this.deps.storage?.releaseFileBytes(tenant, upload.bytes.byteLength);
      throw error;
    }
    return presentFile(record);
  }

  /** A `pending` file and the URL its bytes are PUT to; the first read after the PUT takes them in. */
  async presign(
    tenant: string,
    body: unknown,
  ): Promise<{ file: FileInfo; upload_url: string; expires_in: number }> {
    const input = FilePresignInput().parse(body);
    const uploads = presignedUploads(this.deps.uploads);
    const filename = checkFilename(input.filename);
    const contentType = fileType(input.content_type, filename);
    const fileId = newFileId();
    const url = await uploads.presignPut(
      fileUploadKey(tenant, fileId),
      contentType,
      FILE_UPLOAD_URL_SECONDS,
    );
    const record = this.#record(tenant, fileId, filename, contentType, "presigned");
    await this.deps.files.create(record);
    return { file: presentFile(record), upload_url: url, expires_in: FILE_UPLOAD_URL_SECONDS };
  }

  /** A page of the tenant's files. */
  async list(
    tenant: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ files: FileInfo[]; next_cursor: string | null }> {
    const page = await this.deps.files.list(tenant, limit, cursor);
    return { files: page.items.map(presentFile), next_cursor: page.cursor };
  }

  /** The file; a presigned one whose bytes have arrived is taken in first. 404 for another tenant's id. */
  async get(tenant: string, fileId: string): Promise<FileInfo> {
    return presentFile(await this.#arrived(await this.#find(tenant, fileId)));
  }

  /** The file and its bytes; 409 `file_not_ready` while a presigned upload is pending or failed. */
  async content(tenant: string, fileId: string): Promise<{ file: FileInfo; bytes: Uint8Array }> {
    const record = await this.ready(tenant, fileId);
    const bytes = await this.deps.blobs.get(fileBlobPrefix(tenant, fileId), record.sha256);
    if (!bytes) throw new NotFoundError("file", fileId);
    return { file: presentFile(record), bytes };
  }

  /**
   * The file's record when its bytes can be read: what a task's `{"$file"}`
   * input is checked against. 404 `not_found` for a missing (or another
   * tenant's) file, 409 `file_not_ready` for one still pending or failed.
   */
  async ready(tenant: string, fileId: string): Promise<FileRecord> {
    const record = await this.#arrived(await this.#find(tenant, fileId));
    if (record.status !== "ready") {
      throw new StackVMError(
        "conflict",
        "file_not_ready",
        record.status === "pending"
          ? `file '${fileId}' is waiting for its upload: PUT the bytes to its upload_url, then use it`
          : `file '${fileId}' failed: ${record.error?.message ?? "its upload was not taken in"}`,
      );
    }
    return record;
  }

  /** Deletes the file and its bytes; tasks that named it fail that step with `file_not_found`. */
  async delete(tenant: string, fileId: string): Promise<void> {
    await this.#find(tenant, fileId);
    // The bytes first: a crash between the two leaves a record whose read says
    // its bytes are gone, and a second delete finishes the job. The count goes
    // last, given back by the delete that removed the record (of two deletes at
    // once, one): a crash before it keeps the bytes counted, never less.
    await this.deps.blobs.deletePrefix(fileBlobPrefix(tenant, fileId));
    const removed = await this.deps.files.delete(tenant, fileId);
    if (removed?.counted && this.deps.storage) {
      await this.deps.storage.releaseFileBytes(tenant, removed.size);
    }
  }

  /** Counts `bytes` against the tenant's quota; false when no quota is kept here. */
  async #reserve(tenant: string, bytes: number): Promise<boolean> {
    if (!this.deps.storage) return false;
    await this.deps.storage.reserveFileBytes(tenant, bytes);
    return true;
  }

  async #find(tenant: string, fileId: string): Promise<FileRecord> {
    const record = isFileId(fileId) ? await this.deps.files.get(tenant, fileId) : null;
    if (!record) throw new NotFoundError("file", String(fileId).slice(0, 80));
    return record;
  }

  /**
   * A presigned file whose object has arrived: its bytes are read (up to the
   * most a file may have), stored content-addressed, and the record made
   * `ready`, once (a conditional update; a second reader answers what the
   * first wrote). One still waiting past its URL's life, or too large, fails
   * with the reason. Any other record is answered as it is.
   */
  async #arrived(record: FileRecord): Promise<FileRecord> {
    const uploads = this.deps.uploads;
    if (record.upload !== "presigned" || record.status !== "pending" || !uploads) return record;
    const { tenant_id: tenant, file_id: fileId } = record;
    const key = fileUploadKey(tenant, fileId);
    // The largest file a presigned upload may bring.
    const max = this.deps.maxFileBytes ?? MAX_FILE_BYTES;
    const size = await uploads.size(key);
    const now = new Date(this.deps.clock.now()).toISOString();
    let changes: Array<[string[], unknown]>;
    let counted = 0;
    if (size === null) {
      const waited = this.deps.clock.now() - Date.parse(record.created_at);
      if (waited <= (FILE_UPLOAD_URL_SECONDS + 600) * 1000) return record;
      changes = failed(
        "upload_not_received",
        "nothing was PUT to the upload URL before it expired: ask for a new one",
      );
    } else {
      const bytes = size > max ? null : await uploads.get(key, max);
      if (bytes === null || bytes.byteLength > max) {
        changes = [
          ...failed(
            "too_large",
            `the upload is ${size} bytes or more, over the ${max} a file may have: split it`,
          ),
          [["size"], size],
        ];
      } else if (bytes.byteLength === 0) {
        changes = failed(
          "file_empty",
          "the upload was empty: PUT a file with content to a new upload URL",
        );
      } else {
        let full: StackVMError | null = null;
        try {
          if (await this.#reserve(tenant, bytes.byteLength)) counted = bytes.byteLength;
        } catch (error) {
          if (!isErrorKind(error, "conflict")) throw error;
          full = error as StackVMError;
        }
        if (full) {
          changes = [...failed(full.code, full.message), [["size"], bytes.byteLength]];
        } else {
          const ref = await this.deps.blobs.put(
            fileBlobPrefix(tenant, fileId),
            bytes,
            record.content_type,
          );
          changes = [
            [["status"], "ready"],
            [["size"], ref.size],
            [["sha256"], sha256Hex(bytes)],
            ...(counted > 0 ? ([[["counted"], true]] as Array<[string[], unknown]>) : []),
          ];
        }
      }
    }
    let updated: FileRecord;
    try {
      updated = await this.deps.files.update(
        tenant,
        fileId,
        { set: [...changes, [["updated_at"], now]] },
        { exists: true, equals: { status: "pending" } },
      );
    } catch (error) {
      // Another read took the upload in first (and counted it): this count goes back.
      if (counted > 0) await this.deps.storage?.releaseFileBytes(tenant, counted);
      if (isErrorKind(error, "conflict"))
        return (await this.deps.files.get(tenant, fileId)) ?? record;
      throw error;
    }
    // The object is read: the copy under its hash is the file now.
    if (updated.status !== "pending")
      await this.deps.blobs.deletePrefix(`${fileBlobPrefix(tenant, fileId)}/upload`);
    return updated;
  }

  #record(
    tenant: string,
    fileId: string,
    filename: string,
    contentType: string,
    upload: FileRecord["upload"],
  ): FileRecord {
    const now = new Date(this.deps.clock.now()).toISOString();
    return {
      tenant_id: tenant,
      file_id: fileId,
      filename,
      content_type: contentType,
      size: 0,
      sha256: "",
      status: "pending",
      upload,
      error: null,
      created_at: now,
      updated_at: now,
    };
  }
}

function failed(code: string, message: string): Array<[string[], unknown]> {
  return [
    [["status"], "failed"],
    [["error"], { code, message }],
  ];
}
