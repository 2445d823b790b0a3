/**
 * What a `web_search` call does (loaded with its first call, `web-search.ts`):
 * the provider's request through the guarded fetch, its answer read, the
 * search put on the step's cost ledger.
 */
import { RetryableError, StepError } from "../../errors";
import { guardedFetch } from "../../net/guarded-fetch";
import type { ToolContext, ToolResult } from "../tool";
import { type SearchHit, WEB_SEARCH_PROVIDERS, type WebSearchProvider } from "./search-providers";
import type { WebSearchConfig, WebSearchInput } from "./web-search-input";

const NOT_CONFIGURED =
  "web search is not configured in this deployment: the operator sets STACKVM_WEB_SEARCH_PROVIDER (tavily or brave) and STACKVM_WEB_SEARCH_API_KEY (docs/tools.md, web_search)";

export async function runWebSearch(
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
