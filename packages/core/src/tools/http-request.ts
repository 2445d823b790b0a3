/**
 * `http_request`: calls an HTTP API that the task's namespace allows. Everything
 * that makes this safe lives in `net/guarded-fetch`; this file is the tool's
 * contract: its input schema, the headers it always sends, the shape of its result.
 *
 * Loopback and private addresses: refused whatever the namespace lists; only the
 * operator opens them (`STACKVM_OPEN_PRIVATE_RANGES`, see `net/outbound-policy`),
 * and never the stack's own ports or metadata addresses.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import {
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  type GuardedFetchOptions,
  guardedFetch,
} from "../net/guarded-fetch";
import type { Tool, ToolContext, ToolResult } from "./tool";

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;

/** Headers the tool sets itself or that would let a request pretend to be another. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "idempotency-key",
]);

export const HttpRequestInput = buildOnce(() =>
  z
    .object({
      url: z
        .url({ protocol: /^https?$/, error: "url must be an absolute http:// or https:// URL" })
        .max(8192)
        .describe(
          "Absolute http:// or https:// URL. Its host must be in the namespace's allowed_hosts.",
        ),
      method: z.enum(HTTP_METHODS).default("GET").describe("HTTP method; GET when omitted."),
      headers: z
        .record(
          z
            .string()
            .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "a header name is a token like 'X-Api-Key'"),
          z
            .string()
            .max(8192)
            .regex(/^[^\r\n]*$/, "a header value is one line"),
        )
        .refine(
          (headers) =>
            Object.keys(headers).every((name) => !RESERVED_HEADERS.has(name.toLowerCase())),
          {
            message: `these headers are set by the tool and cannot be given: ${[...RESERVED_HEADERS].join(", ")}`,
          },
        )
        .optional()
        .describe('Request headers, name to value (e.g. {"Authorization": "Bearer ..."}).'),
      body: z
        .unknown()
        .optional()
        .describe(
          "Request body. A string is sent as is (text/plain unless a Content-Type header says otherwise); any other JSON value is sent as JSON (application/json).",
        ),
    })
    .strict(),
);
export type HttpRequestInput = z.infer<ReturnType<typeof HttpRequestInput>>;

export interface HttpRequestToolOptions
  extends Pick<
    GuardedFetchOptions,
    "resolve" | "timeoutMs" | "maxResponseBytes" | "maxRedirects"
  > {}

/**
 * Makes the `http_request` tool. The options exist for tests (an injected
 * resolver, a short timeout) and for configuration; `httpRequestTool` is the
 * default.
 */
export function createHttpRequestTool(
  options: HttpRequestToolOptions = {},
): Tool<HttpRequestInput> {
  return {
    name: "http_request",
    description: describe(options),
    get input() {
      return HttpRequestInput();
    },
    run: (input, context) => runHttpRequest(input, context, options),
  };
}

function describe(options: HttpRequestToolOptions): string {
  const seconds = (options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
  const kib = Math.floor((options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES) / 1024);
  const redirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  return [
    "Sends one HTTP request and returns {status, headers, body}: status is the HTTP status number, headers an object with lower-case names, body the parsed JSON value when the response is JSON, otherwise the text.",
    "An error status (4xx, 5xx) is returned, not raised: check `status`.",
    "Only hosts in the namespace's allowed_hosts can be called; private, loopback and link-local addresses are always refused.",
    `Redirects are followed (up to ${redirects}). The response must be at most ${kib} KiB and arrive within ${seconds} seconds.`,
    "The request carries an Idempotency-Key header that stays the same if the step is retried.",
  ].join(" ");
}

/** The `http_request` tool with the default limits (15 s, 1 MiB, 5 redirects). */
export const httpRequestTool: Tool<HttpRequestInput> = createHttpRequestTool();

async function runHttpRequest(
  input: HttpRequestInput,
  context: ToolContext,
  options: HttpRequestToolOptions,
): Promise<ToolResult> {
  const allowedHosts = context.namespace.allowed_hosts;
  const headers: Record<string, string> = {
    "user-agent": "stackvm/1",
    ...lowerCaseKeys(input.headers ?? {}),
  };
  let body: string | undefined;
  if (input.body !== undefined) {
    body = typeof input.body === "string" ? input.body : JSON.stringify(input.body);
    headers["content-type"] ??=
      typeof input.body === "string" ? "text/plain; charset=utf-8" : "application/json";
  }
  // Set last, so that a plan cannot replace it: the same key on every retry of
  // the step is what lets the far side apply the request once.
  headers["idempotency-key"] = context.idempotencyKey;

  const response = await guardedFetch(
    { url: input.url, method: input.method, headers, ...(body === undefined ? {} : { body }) },
    {
      ...options,
      allowedHosts,
      policy: context.outbound,
      ...(context.outbound.resolve ? { resolve: context.outbound.resolve } : {}),
    },
  );
  return {
    value: {
      status: response.status,
      headers: response.headers,
      body: decodeBody(response.body, response.headers),
    },
    details: { status: response.status, url: response.url, redirects: response.redirects },
  };
}

/** JSON bodies (application/json, any `+json`) become values; the rest is text. */
function decodeBody(bytes: Buffer, headers: Record<string, string>): unknown {
  const text = bytes.toString("utf8");
  const type = (headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const isJson = type === "application/json" || type.endsWith("+json");
  if (!isJson || text.trim() === "") return text;
  try {
    return JSON.parse(text);
  } catch {
    // A server that labels broken JSON as JSON: the text is still worth having.
    return text;
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
}
