/**
 * Presigned uploads, where the deployment has them. Its own module, as
 * `filename.ts` is: the files service reads it at every start of the API.
 */
import { StackVMError } from "../errors";
import type { DocumentUploads } from "../ports/uploads";

/**
 * The port presigned uploads go through, or a 403 `presigned_uploads_unavailable`
 * where none is configured: files and knowledge bases refuse alike, and point to
 * the multipart upload that works everywhere.
 */
export function presignedUploads(uploads: DocumentUploads | undefined): DocumentUploads {
  if (!uploads) {
    throw new StackVMError(
      "forbidden",
      "presigned_uploads_unavailable",
      "presigned uploads are not configured here: upload the file as multipart/form-data",
    );
  }
  return uploads;
}
