/**
 * Where a tenant's files live: the record in the item store (`T#{tenant}` /
 * `FILE#{file_id}`, keys in `store/keys.ts`), the bytes in the blobs under
 * `f/{tenant}/{file_id}` (content-addressed there, `{prefix}/{sha256}`), and a
 * presigned upload's object, until it is taken in, at
 * `f/{tenant}/{file_id}/upload/object`. Every key starts with the tenant, so
 * no file id of one tenant can address another's bytes.
 */
import type { FileRecord, FileStatus } from "../store/file-store";

export type { FileRecord, FileStatus };

/** The largest file a presigned upload may bring (the documented 64 MiB). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The blob prefix of a file: deleting the file deletes everything under it. */
export const fileBlobPrefix = (tenant: string, fileId: string): string => `f/${tenant}/${fileId}`;

/** Where a presigned upload's object lands (under the file's prefix, so its delete takes it too). */
export const fileUploadKey = (tenant: string, fileId: string): string =>
  `${fileBlobPrefix(tenant, fileId)}/upload/object`;

/** A file as the API shows it (`GET /v1/files/{id}`). */
export interface FileInfo {
  file_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string | null;
  status: FileStatus;
  error: { code: string; message: string } | null;
  created_at: string;
}

export function presentFile(record: FileRecord): FileInfo {
  return {
    file_id: record.file_id,
    filename: record.filename,
    content_type: record.content_type,
    size: record.size,
    sha256: record.sha256 || null,
    status: record.status,
    error: record.error ?? null,
    created_at: record.created_at,
  };
}
