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
import type { Tool } from "../tool";
import { type WebSearchConfig, WebSearchInput } from "./web-search-input";

export {
  DEFAULT_SEARCH_PRICE_USD,
  type WebSearchConfig,
  WebSearchInput,
  type WebSearchProvider,
} from "./web-search-input";

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
    // The providers' requests and answers load with the first search: most steps make none.
    run: async (input, context) =>
      (await import("./web-search-run")).runWebSearch(input, context, config),
  };
}
