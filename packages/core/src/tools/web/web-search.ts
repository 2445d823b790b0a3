/**
 * `web_search`: titles, URLs and snippets from the search provider the
 * operator configured (`STACKVM_WEB_SEARCH_PROVIDER`: Tavily or Brave Search).
 * The provider's key is the deployment's, as the LLM's is: it is sent only in
 * the request to the provider, never shown to the planner, a plan or a commit.
 * Each search is a line of the step's cost ledger (`llm_calls`, purpose
 * `web_search`, at the configured price), so it counts in the task's `usage`
 * and budget like an LLM call.
 *
 * The request goes through `net/guarded-fetch` like every other: the provider
 * is public, and a base URL the operator points at this machine (tests, a
 * self-hosted provider) opens only where `STACKVM_OPEN_PRIVATE_RANGES` does.
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import { RetryableError, StepError } from "../../errors";
import { guardedFetch } from "../../net/guarded-fetch";
import type { Tool, ToolContext, ToolResult } from "../tool";
import { type SearchHit, WEB_SEARCH_PROVIDERS, type WebSearchProvider } from "./search-providers";

export { WEB_SEARCH_PROVIDERS, type WebSearchProvider } from "./search-providers";

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

const NOT_CONFIGURED =
  "web search is not configured in this deployment: the operator sets STACKVM_WEB_SEARCH_PROVIDER (tavily or brave) and STACKVM_WEB_SEARCH_API_KEY (docs/tools.md, web_search)";

/** Makes the `web_search` tool over the operator's settings. */
export function createWebSearchTool(config: WebSearchConfig): Tool<WebSearchInput> {
  return {
    name: "web_search",
    description: [
      "Searches the web and returns {query, results: [{title, url, snippet}]}, best first.",
      "Use it for anything the model cannot know (recent events, prices, documentation): then web_fetch a result's url to read the page, and pass what you read to llm_generate.",
      "Snippets are short: read a page before relying on it. Each search costs money (counted in the task's usage).",
      ...(config.provider === null ? ["Not configured in this deployment: do not use it."] : []),
    ].join(" "),
    get input() {
      return WebSearchInput();
    },
    run: (input, context) => runWebSearch(input, context, config),
  };
}

async function runWebSearch(
  input: WebSearchInput,
  context: ToolContext,
  config: WebSearchConfig,
): Promise<ToolResult> {
  const { provider, apiKey } = config;
  if (provider === null || apiKey === null) {
    throw new StepError("web_search_not_configured", NOT_CONFIGURED);
  }
  // A search costs money: the branch's budget is checked first, as before an LLM call.
  context.llm.checkBudget();
  const spec = WEB_SEARCH_PROVIDERS[provider];
  const started = Date.now();
  const response = await guardedFetch(spec.request(config.baseUrl ?? spec.baseUrl, apiKey, input), {
    policy: context.outbound,
    ...(context.outbound.resolve ? { resolve: context.outbound.resolve } : {}),
    timeoutMs: config.timeoutMs ?? 15_000,
    maxResponseBytes: 2 * 1024 * 1024,
    maxRedirects: 0,
  });
  if (response.status !== 200) {
    throw providerError(provider, response.status, response.body.toString("utf8"));
  }
  let hits: SearchHit[];
  try {
    hits = spec.results(JSON.parse(response.body.toString("utf8")));
  } catch {
    throw new RetryableError(
      "web_search_unavailable",
      `${spec.label} answered something other than its search results (HTTP 200, ${response.body.length} bytes): try again later`,
    );
  }
  context.llm.calls.push({
    purpose: "web_search",
    model: provider,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: config.priceUsd,
    latency_ms: Date.now() - started,
  });
  const results = hits.slice(0, input.max_results);
  return {
    value: { query: input.query, results },
    details: { provider, results: results.length },
  };
}

/** A provider's refusal, in words an operator can act on; never the key itself. */
function providerError(provider: WebSearchProvider, status: number, body: string) {
  const { label, refusedKey } = WEB_SEARCH_PROVIDERS[provider];
  if (refusedKey(status, body)) {
    return new StepError(
      "web_search_rejected",
      `${label} refused the deployment's key (HTTP ${status}): the operator checks STACKVM_WEB_SEARCH_API_KEY and the account's credit`,
      { provider, status },
    );
  }
  if (status === 429 || status >= 500) {
    return new RetryableError(
      "web_search_unavailable",
      `${label} is busy or down (HTTP ${status}): the search is tried again`,
    );
  }
  return new StepError(
    "web_search_failed",
    `${label} refused the search (HTTP ${status}): use a shorter query of plain key words`,
    { provider, status },
  );
}
