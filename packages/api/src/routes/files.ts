/**
 * `/v1/files`: a tenant's files, uploaded once (multipart, or a presigned PUT
 * for a large one) and passed to tasks by reference, `{"$file": id}`, in a
 * task's `inputs` or a `run_code`/`code_task` step's `files`. Listed, read
 * (metadata and bytes) and deleted per tenant: another tenant's id is 404.
 *
 * The bytes are the tenant's, not ours: they are served as an attachment unless
 * their type is one a browser only displays, with a sandboxing CSP and
 * `nosniff`, as the blob route serves a step's files.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { ApiApp } from "../env";
import { bearer, commonErrors, conflictError, ErrorBody, invalidError, json } from "../schemas";
import { readUploadBody } from "../upload-body";
import type { FILES_ROUTES } from "./files.paths";

const FileParam = z.object({
  file_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "file_id", in: "path" }, example: "file_0123456789abcdefghij" }),
});

const FileInfo = z
  .object({
    file_id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    sha256: z.string().nullable(),
    status: z.enum(["pending", "ready", "failed"]),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    created_at: z.string(),
  })
  .openapi("File");

/** Types shown inline; anything else (HTML, SVG, scripts) is sent as bytes to save. */
const INLINE =
  /^(image\/(png|jpeg|gif|webp|avif)|audio\/[a-z0-9.+-]+|text\/(plain|csv)|application\/(json|pdf))$/;

export function registerFileRoutes(app: ApiApp, routes: typeof FILES_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.uploadFile,
      summary: "Upload a file (multipart), or ask for a presigned upload URL (JSON)",
      description:
        "Send `multipart/form-data` with one `file` part, of any type (its content type, or else its " +
        "extension, names it): the answer (201) is the file, `ready`, with its `file_id`. Pass it to a " +
        'task as `{"$file": "file_…"}` in `inputs`, or in a `run_code`/`code_task` step\'s `files`. For a ' +
        'large file send JSON `{"filename", "content_type"?}` instead: the answer (201) is the file, ' +
        "`pending`, and an `upload_url` to PUT its bytes to (with that Content-Type) within `expires_in` " +
        "seconds; the first read of the file after the PUT takes them in and makes it `ready`.",
      security: bearer,
      responses: {
        201: json(
          z.union([
            FileInfo,
            z.object({ file: FileInfo, upload_url: z.string(), expires_in: z.number().int() }),
          ]),
          "The file (multipart), or the file and its presigned upload URL (JSON)",
        ),
        409: json(
          ErrorBody,
          "The tenant's files would hold more than its `file_storage_bytes` quota (`file_storage_full`)",
        ),
        413: json(ErrorBody, "The upload is over STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES (`too_large`)"),
        ...commonErrors,
        ...invalidError,
      },
    }),
    async (c) => {
      const files = c.get("deps").files;
      const upload = await readUploadBody(c.req, "file", "data.xlsx");
      if ("presign" in upload) {
        return c.json(await files.presign(c.get("tenantId"), upload.presign), 201);
      }
      const { file } = upload;
      const info = await files.upload(c.get("tenantId"), {
        filename: file.name,
        contentType: file.type || undefined,
        bytes: new Uint8Array(await file.arrayBuffer()),
      });
      return c.json(info, 201);
    },
  );

  app.openapi(
    createRoute({
      ...routes.listFiles,
      summary: "List the tenant's files",
      security: bearer,
      request: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(100).default(100),
          cursor: z.string().max(2000).optional(),
        }),
      },
      responses: {
        200: json(
          z.object({ files: z.array(FileInfo), next_cursor: z.string().nullable() }),
          "A page of files",
        ),
        ...commonErrors,
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(
        await c.get("deps").files.list(c.get("tenantId"), q.cursor ?? null, q.limit),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.getFile,
      summary: "Read a file's metadata (a presigned upload is taken in here)",
      security: bearer,
      request: { params: FileParam },
      responses: { 200: json(FileInfo, "The file"), ...commonErrors },
    }),
    async (c) =>
      c.json(await c.get("deps").files.get(c.get("tenantId"), c.req.valid("param").file_id), 200),
  );

  app.openapi(
    createRoute({
      ...routes.getFileContent,
      summary: "Download a file's bytes",
      description:
        "Displayable types (images, plain text, CSV, JSON, PDF) are sent inline, anything else as an " +
        "attachment (`application/octet-stream`). 409 `file_not_ready` while a presigned upload is pending.",
      security: bearer,
      request: { params: FileParam },
      responses: {
        200: {
          description: "The bytes",
          content: {
            "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) },
          },
        },
        ...commonErrors,
        ...conflictError,
      },
    }),
    async (c) => {
      const { file, bytes } = await c
        .get("deps")
        .files.content(c.get("tenantId"), c.req.valid("param").file_id);
      const inline = INLINE.test(file.content_type);
      // The name as an RFC 5987 value: no quote or header break can come from it.
      const name = encodeURIComponent(file.filename);
      c.header("content-type", inline ? file.content_type : "application/octet-stream");
      c.header(
        "content-disposition",
        `${inline ? "inline" : "attachment"}; filename*=UTF-8''${name}`,
      );
      c.header("content-security-policy", "default-src 'none'; sandbox");
      c.header("x-content-type-options", "nosniff");
      c.header("cache-control", "private, no-store");
      return c.body(new Uint8Array(bytes).buffer as ArrayBuffer, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteFile,
      summary: "Delete a file and its bytes",
      description:
        "A task step that names the file afterwards fails with `file_not_found`; a new task naming it is refused (422).",
      security: bearer,
      request: { params: FileParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      await c.get("deps").files.delete(c.get("tenantId"), c.req.valid("param").file_id);
      return c.body(null, 204);
    },
  );
}
