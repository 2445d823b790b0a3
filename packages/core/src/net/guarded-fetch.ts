/**
 * The one way the system makes outgoing HTTP requests to addresses that a plan or
 * an integrator chose (the `http_request` tool, outgoing webhooks). Every hop,
 * the first and each redirect, is checked before any byte leaves: the scheme
 * (http or https), the host against the allow-list, an IP literal against the
 * address guard, and a name's resolved addresses at connect time through a
 * guarded `lookup`. Redirects are followed by hand so that each one is checked.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { StackVMError, StepError } from "../errors";
import { type AddressPolicy, assertAddressAllowed, guardedLookup } from "./address-guard";
import { matchHost, normalizeHost } from "./host-allow-list";
import { type Resolver, systemResolver } from "./resolver";

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;

export interface GuardedRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface GuardedFetchOptions {
  /** Hosts each hop may go to (see `matchHost`); undefined: any host (addresses are still guarded). */
  allowedHosts?: readonly string[];
  /**
   * The ranges the operator opened and the stack's own ports (an `OutboundPolicy`);
   * default: only public addresses. Applies to every hop alike: a tenant's
   * `allowed_hosts` never widens it.
   */
  policy?: AddressPolicy;
  /** Name resolution; tests inject one so that nothing leaves the machine. */
  resolve?: Resolver;
  /** Deadline for the whole exchange, redirects included. */
  timeoutMs?: number;
  maxResponseBytes?: number;
  maxRedirects?: number;
  /**
   * What a body past `maxResponseBytes` does: `fail` (the default) throws
   * `response_too_large`; `truncate` stops reading there and answers the first
   * `maxResponseBytes` bytes with `truncated: true` (a page reader keeps the start).
   */
  overflow?: "fail" | "truncate";
}

export interface GuardedResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  redirects: number;
  /** True when the body was cut at `maxResponseBytes` (`overflow: "truncate"`). */
  truncated?: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin, as fetch does: they belong to the first site. */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/**
 * Sends a request through the guard and reads the whole answer (capped).
 * Failures are `StepError`s: `invalid_url`, `host_not_allowed`, `address_forbidden`,
 * `too_many_redirects`, `response_too_large`, `http_timeout`, `http_error`.
 * An HTTP error status is an answer, not a failure.
 *
 * @example
 * const res = await guardedFetch({ url: "https://api.example.com/items" }, { allowedHosts: ["api.example.com"] });
 */
export async function guardedFetch(
  request: GuardedRequest,
  options: GuardedFetchOptions = {},
): Promise<GuardedResponse> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let url = parseUrl(request.url);
  let method = (request.method ?? "GET").toUpperCase();
  let headers = { ...request.headers };
  let body = request.body;

  for (let redirects = 0; ; redirects++) {
    const port = checkHop(url, options);
    const answer = await sendOnce(url, method, headers, body, port, options, deadline);
    const location = answer.headers.location;
    if (!REDIRECTS.has(answer.status) || location === undefined) {
      return { ...answer, url: url.href, redirects };
    }
    if (redirects >= maxRedirects) {
      throw new StepError(
        "too_many_redirects",
        `${request.url} redirected more than ${maxRedirects} times (last to ${location})`,
        { url: request.url, max_redirects: maxRedirects },
      );
    }
    const next = parseUrl(location, url);
    if (next.origin !== url.origin) headers = withoutHeaders(headers, CREDENTIAL_HEADERS);
    // 303 always, and 301/302 after a POST, continue as GET without a body (as browsers do).
    if (
      (answer.status === 303 && method !== "HEAD") ||
      ([301, 302].includes(answer.status) && method === "POST")
    ) {
      method = "GET";
      body = undefined;
      headers = withoutHeaders(headers, ["content-type", "content-length"]);
    }
    url = next;
  }
}

function parseUrl(text: string, base?: URL): URL {
  if (!URL.canParse(text, base)) {
    throw new StepError(
      "invalid_url",
      `'${text}' is not a valid URL: use an absolute http:// or https:// URL`,
    );
  }
  return new URL(text, base);
}

/** Checks one hop before it is sent; returns the port it connects to. */
function checkHop(url: URL, options: GuardedFetchOptions): number {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new StepError(
      "invalid_url",
      `${url.href}: only http:// and https:// URLs can be requested`,
    );
  }
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const host = normalizeHost(url.hostname);
  // An IP literal never goes through lookup, so it is checked here; first, because
  // "add it to allowed_hosts" would be the wrong advice for a forbidden address.
  // (The URL parser has already turned 127.1, 2130706433 and 0x7f.1 into 127.0.0.1.)
  if (isIP(host)) assertAddressAllowed(host, options.policy ?? {}, host, port);
  if (options.allowedHosts && matchHost(host, options.allowedHosts) === undefined) {
    const listed = options.allowedHosts.length ? options.allowedHosts.join(", ") : "none";
    throw new StepError(
      "host_not_allowed",
      `host '${host}' is not allowed (allowed hosts: ${listed}); add ${allowHint(host)} to the namespace's allowed_hosts`,
      { host, allowed_hosts: options.allowedHosts },
    );
  }
  return port;
}

/** What to add to allow a host: the host, and for a name under a domain, its wildcard too. */
function allowHint(host: string): string {
  const labels = host.split(".");
  if (isIP(host) || labels.length < 3) return `'${host}'`;
  return `'${host}' or '*.${labels.slice(1).join(".")}'`;
}

interface HopAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated?: boolean;
}

/**
 * The request function of the URL's scheme, imported on the first request: an
 * ES module import of `node:http` reads its lazy exports, which loads Node's own
 * fetch (undici) too, tens of milliseconds of every cold start of a function
 * whose work makes no such request (most steps, most API requests).
 */
async function requestFor(url: URL) {
  return url.protocol === "https:"
    ? (await import("node:https")).request
    : (await import("node:http")).request;
}

async function sendOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  port: number,
  options: GuardedFetchOptions,
  deadline: number,
): Promise<HopAnswer> {
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const send = await requestFor(url);
  const outgoing: OutgoingHttpHeaders = { ...headers };
  if (body !== undefined) outgoing["content-length"] = Buffer.byteLength(body);

  return new Promise<HopAnswer>((resolve, reject) => {
    const req = send(url, {
      method,
      headers: outgoing,
      lookup: guardedLookup(options.resolve ?? systemResolver, options.policy ?? {}, port),
      // No shared keep-alive pool: a pooled socket could have been opened by an
      // unguarded request to the same host:port.
      agent: false,
    });
    const fail = (error: unknown) => {
      clearTimeout(timer);
      req.destroy();
      reject(asStepError(error, url));
    };
    const timer = setTimeout(
      () =>
        fail(
          new StepError(
            "http_timeout",
            `${url.href} did not answer within ${options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`,
            {
              url: url.href,
            },
          ),
        ),
      Math.max(0, deadline - Date.now()),
    );
    req.on("error", fail);
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const answerHeaders = flattenHeaders(res.headers);
      if (REDIRECTS.has(status) && answerHeaders.location !== undefined) {
        clearTimeout(timer);
        res.destroy();
        resolve({ status, headers: answerHeaders, body: Buffer.alloc(0) });
        return;
      }
      const tooLarge = () =>
        new StepError(
          "response_too_large",
          `the response of ${url.href} is larger than ${maxBytes} bytes; ask for less (a page, a filter) or use an endpoint that answers smaller`,
          { url: url.href, max_bytes: maxBytes },
        );
      const truncate = options.overflow === "truncate";
      if (!truncate && Number(answerHeaders["content-length"] ?? 0) > maxBytes) {
        return fail(tooLarge());
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBytes) {
          chunks.push(chunk);
        } else if (truncate) {
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          clearTimeout(timer);
          res.destroy();
          req.destroy();
          resolve({ status, headers: answerHeaders, body: Buffer.concat(chunks), truncated: true });
        } else {
          res.destroy();
          fail(tooLarge());
        }
      });
      res.on("error", fail);
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status, headers: answerHeaders, body: Buffer.concat(chunks) });
      });
    });
    req.end(body);
  });
}

function asStepError(error: unknown, url: URL): StackVMError {
  if (error instanceof StackVMError) return error;
  const e = error as { code?: string; message?: string };
  return new StepError(
    "http_error",
    `request to ${url.origin} failed: ${e.code ?? e.message ?? String(error)}`,
    { url: url.href, cause_code: e.code },
    error,
  );
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined)
      flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !names.includes(name.toLowerCase())),
  );
}
