/**
 * `web_fetch`: one web page as readable Markdown, with its title and the URL
 * that answered after redirects. The request goes through `net/guarded-fetch`
 * like `http_request`'s (every hop checked against the outbound policy: no
 * loopback, private, link-local or metadata address, whatever the spelling or
 * the redirect), but to any public host: it only reads (GET, no headers or
 * body from the plan), and a namespace allows it or not by `allowed_tools`.
 *
 * Bounded: the page's first `maxBytes` are read (the rest is left unread, and
 * the answer says `truncated`), within `timeoutMs`; the Markdown is cut at the
 * call's `max_chars`. The reader (linkedom, Readability, Turndown) loads with
 * the first page (`web-fetch-run.ts`): a worker's cold start does not pay for it.
 */
import type { Tool } from "../tool";
import {
  DEFAULT_FETCH_MAX_BYTES,
  DEFAULT_FETCH_TIMEOUT_MS,
  type WebFetchConfig,
  WebFetchInput,
} from "./web-fetch-input";

export { type WebFetchConfig, WebFetchInput } from "./web-fetch-input";

/** Makes the `web_fetch` tool with the operator's bounds. */
export function createWebFetchTool(config: WebFetchConfig = {}): Tool<WebFetchInput> {
  const kib = Math.floor((config.maxBytes ?? DEFAULT_FETCH_MAX_BYTES) / 1024);
  const seconds = (config.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS) / 1000;
  return {
    name: "web_fetch",
    description: [
      "Reads one web page and returns {url, title, markdown, truncated}: the page's main text as Markdown (menus, ads and scripts left out), its title, and the URL that answered after redirects.",
      "Any public http(s) URL can be read; private, loopback and link-local addresses are always refused. HTML and plain text (also JSON, XML, CSV, Markdown) are read; other types (PDF, images) are refused.",
      `The first ${kib} KiB of the page are read, within ${seconds} seconds. Pass markdown to llm_generate as context to answer from the page.`,
    ].join(" "),
    get input() {
      return WebFetchInput();
    },
    // The reader loads with the first page: most steps read none.
    run: async (input, context) =>
      (await import("./web-fetch-run")).runWebFetch(input, context, config),
  };
}

/** `web_fetch` with the default bounds (2 MiB, 15 s, 5 redirects). */
export const webFetchTool: Tool<WebFetchInput> = createWebFetchTool();
