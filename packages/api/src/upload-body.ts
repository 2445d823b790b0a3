/**
 * The body of an upload route (`POST /v1/files`, a knowledge base's
 * `POST …/documents`): JSON asks for a presigned upload URL, multipart/form-data
 * carries the bytes in one `file` part. One reading for both, so that the two
 * routes refuse the same bodies with the same words: anything else, an unreadable
 * form, no `file` part or two of them is a 400 that says what to send.
 */
import { MalformedError } from "@stackvm/core";
import type { HonoRequest } from "hono";

/** A multipart form as Hono parses it with `all: true`. */
export type UploadForm = Record<string, string | File | (string | File)[]>;

/** JSON (`presign`, not yet validated) or the form's one file and the whole form. */
export type UploadBody = { presign: unknown } | { file: File; form: UploadForm };

/**
 * Reads an upload's body; `what` names the upload in the refusals ("file",
 * "document") and `example` is a filename for their curl line.
 *
 * @example
 * const body = await readUploadBody(c.req, "file", "data.xlsx");
 * if ("presign" in body) return c.json(await files.presign(tenantId, body.presign), 201);
 */
export async function readUploadBody(
  req: HonoRequest,
  what: string,
  example: string,
): Promise<UploadBody> {
  const type = (req.header("content-type") ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    try {
      return { presign: await req.json() };
    } catch {
      throw new MalformedError(
        'the body is not JSON: send {"filename", "content_type"} for an upload URL',
      );
    }
  }
  if (!type.startsWith("multipart/form-data")) {
    throw new MalformedError(
      `send the ${what} as multipart/form-data with a 'file' part (curl -F file=@${example}), or JSON {"filename", "content_type"} for a presigned upload URL; not ${type || "no content type"}`,
    );
  }
  let form: UploadForm;
  try {
    form = await req.parseBody({ all: true });
  } catch {
    throw new MalformedError("the multipart body cannot be read: check its boundary and parts");
  }
  const file = form.file;
  if (!(file instanceof File)) {
    throw new MalformedError(
      Array.isArray(file)
        ? "send one 'file' part per upload"
        : `the form has no 'file' part with a file: send it as -F file=@${example}`,
    );
  }
  return { file, form };
}
