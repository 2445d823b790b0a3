/**
 * `GET /v1/tasks/{task_id}/blobs/{sha256}`: the bytes of a value a step stored
 * in the blob store (an MCP tool's image or audio, a sandbox's file), which the
 * step's outputs name as `{"$ref": "s3", "size", "sha256"}`. Tenant-checked: the
 * blobs of a task live under its tenant's prefix, and another tenant's task is 404.
 *
 * The bytes are the tool's, not ours: they are served so that no browser runs
 * them on this origin (a sandboxing CSP, `nosniff`), and as an attachment unless
 * the asked type is one a browser only displays.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { ApiApp } from "../env";
import { bearer, commonErrors, TaskIdParam } from "../schemas";
import type { BLOBS_ROUTES } from "./blobs.paths";

const BlobParams = TaskIdParam.extend({
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "sha256 is the blob's 64 hex digits, as its reference names them")
    .openapi({ param: { name: "sha256", in: "path" } }),
});

/** Types shown inline; anything else (HTML, SVG, scripts) is sent as bytes to save. */
const INLINE =
  /^(image\/(png|jpeg|gif|webp|avif)|audio\/[a-z0-9.+-]+|text\/plain|application\/(json|pdf))$/;

const BlobQuery = z.object({
  type: z.string().max(100).optional().openapi({
    description:
      "The content type to answer with: the `mime_type` beside the reference (e.g. `image/png`). Displayable types (images, audio, plain text, JSON, PDF) are sent inline; others as `application/octet-stream`, to save.",
  }),
});

export function registerBlobRoutes(app: ApiApp, routes: typeof BLOBS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.getTaskBlob,
      summary: "Download a blob a step stored (a tool's image, a sandbox's file)",
      description:
        'A step\'s output names a stored blob as `{"$ref": "s3", "size", "sha256"}` (an MCP tool\'s ' +
        "image is `{type, mime_type, blob}`): this route answers its bytes. 404 when the task does " +
        "not exist (or is another tenant's) or holds no such blob.",
      security: bearer,
      request: { params: BlobParams, query: BlobQuery },
      responses: {
        200: {
          description: "The bytes",
          content: {
            "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) },
          },
        },
        ...commonErrors,
      },
    }),
    async (c) => {
      const { task_id, sha256 } = c.req.valid("param");
      const asked = c.req.valid("query").type?.toLowerCase();
      const bytes = await c.get("deps").tasks.blob(c.get("tenantId"), task_id, sha256);
      const inline = asked !== undefined && INLINE.test(asked);
      c.header("content-type", inline ? asked : "application/octet-stream");
      c.header("content-disposition", inline ? "inline" : `attachment; filename="${sha256}"`);
      c.header("content-security-policy", "default-src 'none'; sandbox");
      c.header("cache-control", "private, max-age=86400, immutable");
      return c.body(new Uint8Array(bytes).buffer as ArrayBuffer, 200);
    },
  );
}
