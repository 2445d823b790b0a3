/**
 * What a `web_fetch` call does (loaded with its first call, `web-fetch.ts`):
 * one guarded GET, the answer's type decides how it is read (HTML through the
 * page reader, text as it is, anything else refused), then the Markdown cut at
 * the call's `max_chars`.
 */
import { StepError } from "../../errors";
import { loadOnce } from "../../load-once";
import { DEFAULT_MAX_REDIRECTS, guardedFetch } from "../../net/guarded-fetch";
import type { ToolContext, ToolResult } from "../tool";
import {
  DEFAULT_FETCH_MAX_BYTES,
  DEFAULT_FETCH_TIMEOUT_MS,
  type WebFetchConfig,
  type WebFetchInput,
} from "./web-fetch-input";

/** linkedom, Readability and Turndown: loaded with the first HTML page, not with a text one. */
const pageReader = loadOnce(() => import("./page-markdown"));

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_TYPES = new Set([
  "text/plain",
  "text/markdown",
  "text/x-markdown",
  "text/csv",
  "text/xml",
  "application/xml",
  "application/json",
  "application/ld+json",
]);

export async function runWebFetch(
  input: WebFetchInput,
  context: ToolContext,
  config: WebFetchConfig,
): Promise<ToolResult> {
  const response = await guardedFetch(
    {
      url: input.url,
      method: "GET",
      headers: {
        "user-agent": "stackvm/1 (web_fetch)",
        accept: "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1",
      },
    },
    {
      policy: context.outbound,
      ...(context.outbound.resolve ? { resolve: context.outbound.resolve } : {}),
      timeoutMs: config.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS,
      maxResponseBytes: config.maxBytes ?? DEFAULT_FETCH_MAX_BYTES,
      maxRedirects: config.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
      overflow: "truncate",
    },
  );
  if (response.status >= 400) {
    throw new StepError(
      "web_fetch_status",
      `${response.url} answered HTTP ${response.status}: check the URL, or read another result`,
      { url: response.url, status: response.status },
    );
  }
  const contentType = response.headers["content-type"] ?? "";
  const type = mediaType(contentType);
  const text = decode(response.body, contentType);
  let page: { title: string; markdown: string };
  if (HTML_TYPES.has(type) || (type === "" && /^\s*<(!doctype html|html)/i.test(text))) {
    page = (await pageReader()).pageMarkdown(text, response.url);
  } else if (TEXT_TYPES.has(type) || type.startsWith("text/") || /\+(json|xml)$/.test(type)) {
    page = { title: "", markdown: text };
  } else {
    throw new StepError(
      "web_fetch_unsupported_type",
      `${response.url} is ${type || "of no declared type"}, not a web page or text: web_fetch reads HTML and text (plain, Markdown, CSV, JSON, XML); for a PDF, upload it to a knowledge base and use vector_search`,
      { url: response.url, content_type: type },
    );
  }
  const cut = cutAt(page.markdown, input.max_chars);
  const truncated = cut.length < page.markdown.length || response.truncated === true;
  return {
    value: { url: response.url, title: page.title, markdown: cut, truncated },
    details: {
      status: response.status,
      url: response.url,
      redirects: response.redirects,
      bytes: response.body.length,
      truncated,
    },
  };
}

/** `text/html; charset=…` → `text/html`. */
function mediaType(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

/** The body in its declared charset (UTF-8 when it declares none, or one this runtime cannot read). */
function decode(body: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

/** The text cut to `max` characters, at the last paragraph break of its last fifth when there is one. */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const paragraph = head.lastIndexOf("\n\n");
  return paragraph >= max * 0.8 ? head.slice(0, paragraph) : head;
}
