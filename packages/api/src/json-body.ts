/**
 * One check of every JSON request body, before any route reads it: at most 32
 * levels of objects and arrays (`MAX_JSON_DEPTH`, as the store allows) and none
 * of the keys `__proto__`, `constructor`, `prototype`, at any depth. Each route
 * then validates its own schema; this is what no route may forget, and it
 * answers a clear 400 where such a body used to reach the store and fail with a
 * 500 (a stack overflow, or the DynamoDB marshaller's "Unsupported type passed").
 *
 * A body sent as JSON that is not JSON answers 400 `malformed_json` here, with
 * the line, column and offset of the first character that is wrong, for every
 * route alike. An empty body goes on: a route that needs one says so.
 *
 * The body is read once and kept by Hono, so that routes (and a signature check
 * over the raw bytes) read the same bytes again.
 */
import { shapeProblem } from "@stackvm/core";
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./env";
import { errorBody, malformedJsonBody } from "./errors";

const WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const decoder = new TextDecoder();
/** The media types Hono's JSON validator reads as JSON: `application/json`, `application/x+json`. */
const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** True when the request says its body is JSON. */
function sentAsJson(contentType: string | undefined): boolean {
  return JSON_TYPE.test((contentType ?? "").split(";")[0]!.trim());
}

export const checkJsonBody: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (!WITH_BODY.has(c.req.method)) return next();
  // Errors of the read itself (a body over the limit) go on to the body limit's answer.
  const bytes = await c.req.arrayBuffer();
  const text = decoder.decode(bytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    if (sentAsJson(c.req.header("content-type")) && text.trim() !== "") {
      return c.json(malformedJsonBody(text), 400);
    }
    // Empty, or not sent as JSON (a multipart upload): the route's own parsing answers it.
    return next();
  }
  const problem = shapeProblem(body, "the request body");
  if (problem) {
    return c.json(errorBody(problem.code, problem.message, { path: problem.path }), 400);
  }
  return next();
};
