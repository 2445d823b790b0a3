/**
 * What `web_fetch` takes and the operator's bounds, apart from the tool so that
 * its run (`web-fetch-run.ts`, loaded on first use) reads them without
 * importing the tool back.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";

export const DEFAULT_FETCH_MAX_BYTES = 2 * 1024 * 1024;
export const DEFAULT_FETCH_TIMEOUT_MS = 15_000;
export const DEFAULT_FETCH_MAX_CHARS = 20_000;
export const MAX_FETCH_CHARS = 100_000;

/** The operator's bounds (`STACKVM_WEB_FETCH_MAX_BYTES`, `STACKVM_WEB_FETCH_TIMEOUT_MS`). */
export interface WebFetchConfig {
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export const WebFetchInput = buildOnce(() =>
  z
    .object({
      url: z
        .url({ protocol: /^https?$/, error: "url must be an absolute http:// or https:// URL" })
        .max(8192, "url is longer than 8,192 characters")
        .describe("Absolute http:// or https:// URL of the page (a web_search result's url)."),
      max_chars: z
        .number()
        .int()
        .min(1_000)
        .max(MAX_FETCH_CHARS)
        .default(DEFAULT_FETCH_MAX_CHARS)
        .describe(
          `The most characters of Markdown to return (1,000 to ${MAX_FETCH_CHARS.toLocaleString("en")}, default ${DEFAULT_FETCH_MAX_CHARS.toLocaleString("en")}); a longer page is cut and says truncated: true.`,
        ),
    })
    .strict(),
);
export type WebFetchInput = z.infer<ReturnType<typeof WebFetchInput>>;
