/**
 * The web tools, built over the operator's settings (`wireTools` hands them to
 * the registry with the other built-ins): `web_search` through the configured
 * provider, `web_fetch` within the configured bounds.
 */
import type { Tool } from "../tool";
import { createWebFetchTool, type WebFetchConfig } from "./web-fetch";
import { createWebSearchTool, type WebSearchConfig } from "./web-search";

/** What the operator set for the web tools; none: no search provider, the default bounds. */
export interface WebToolsConfig {
  search: WebSearchConfig;
  fetch?: WebFetchConfig;
}

/** No provider: `web_search` says how to configure one. */
export const NO_WEB_SEARCH: WebSearchConfig = { provider: null, apiKey: null, priceUsd: 0 };

/**
 * @example
 * const tools = [...builtinTools().values(), ...webTools({ search: NO_WEB_SEARCH })];
 */
export function webTools(config: WebToolsConfig = { search: NO_WEB_SEARCH }): Tool[] {
  return [createWebSearchTool(config.search), createWebFetchTool(config.fetch)];
}
