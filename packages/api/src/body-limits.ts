/**
 * How large a request body may be: `STACKVM_MAX_BODY_BYTES` for every route,
 * and the larger `STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES` for a document upload. A
 * body over its limit is answered 413 before it is read whole.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ApiEnv } from "./env";
import { errorBody } from "./errors";

/** The routes that take uploads (documents and files), with their own limit. */
const UPLOAD_PATH = /^\/v1\/(knowledge-bases\/[^/]+\/documents|files)\/?$/;

/** A 413 that closes the connection: the rest of the body is never read. */
function tooLarge(message: string): NonNullable<Parameters<typeof bodyLimit>[0]["onError"]> {
  return (c) => {
    // The server closes the connection after this answer: say so, or a client
    // reuses a socket that is about to close.
    c.header("connection", "close");
    return c.json(errorBody("too_large", message), 413);
  };
}

/** The body limit of every request, by its route. */
export function bodyLimits(
  maxBodyBytes: number,
  maxUploadBytes: number,
): MiddlewareHandler<ApiEnv> {
  const general = bodyLimit({
    maxSize: maxBodyBytes,
    onError: tooLarge(`the request body is over ${maxBodyBytes} bytes`),
  });
  const upload = bodyLimit({
    // The largest document plus room for the multipart framing.
    maxSize: maxUploadBytes + 64 * 1024,
    onError: tooLarge(
      `the upload is over ${maxUploadBytes} bytes: ask for a presigned upload URL instead (POST this route with JSON {"filename", "content_type"})`,
    ),
  });
  return (c, next) =>
    c.req.method === "POST" && UPLOAD_PATH.test(c.req.path) ? upload(c, next) : general(c, next);
}
