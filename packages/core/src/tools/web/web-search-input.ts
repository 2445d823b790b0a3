/**
 * What `web_search` takes and the operator's settings, apart from the tool so
 * that its run (`web-search-run.ts`, loaded with the first search) reads them
 * without importing the tool back.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import type { WebSearchProvider } from "./search-providers";

export type { WebSearchProvider } from "./search-providers";

/** Brave refuses a query past 400 characters (or 50 words); Tavily's is as short in practice. */
export const MAX_QUERY_CHARS = 400;
export const MAX_SEARCH_RESULTS = 20;

/** The operator's search settings (`STACKVM_WEB_SEARCH_*`); no provider: the tool says how to set one. */
export interface WebSearchConfig {
  provider: WebSearchProvider | null;
  apiKey: string | null;
  /** The provider's origin (and path prefix) instead of its own: tests point it at loopback. */
  baseUrl?: string | null;
  /** Dollars charged to the task per search. */
  priceUsd: number;
  timeoutMs?: number;
}

/** The price per search when the operator sets none: each provider's listed pay-as-you-go price. */
export const DEFAULT_SEARCH_PRICE_USD: Readonly<Record<WebSearchProvider, number>> = {
  tavily: 0.008,
  brave: 0.005,
};

export const WebSearchInput = buildOnce(() =>
  z
    .object({
      query: z
        .string()
        .trim()
        .min(1, "query must not be empty")
        .max(
          MAX_QUERY_CHARS,
          `query is longer than ${MAX_QUERY_CHARS} characters: search for a few key words`,
        )
        .describe("What to search the web for: a few key words, as typed into a search box."),
      max_results: z
        .number()
        .int()
        .min(1)
        .max(MAX_SEARCH_RESULTS)
        .default(5)
        .describe(`How many results to return (1 to ${MAX_SEARCH_RESULTS}, default 5).`),
    })
    .strict(),
);
export type WebSearchInput = z.infer<ReturnType<typeof WebSearchInput>>;
