import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type ScriptedSearchProvider,
  startSearchProvider,
} from "../../../../../test/support/search-provider";
import type { LlmCall } from "../../model";
import { LOOPBACK_OPENED } from "../../net/outbound-policy";
import { trapOutsideConnections } from "../../testing/net";
import { testToolContext } from "../../testing/tool-context";
import type { ToolContext } from "../tool";
import { NO_WEB_SEARCH, webTools } from ".";
import { createWebSearchTool, type WebSearchConfig, WebSearchInput } from "./web-search";

let provider: ScriptedSearchProvider;
beforeAll(async () => {
  provider = await startSearchProvider();
});
afterAll(() => provider.close());
beforeEach(() => {
  trapOutsideConnections();
  provider.requests.length = 0;
});
afterEach(() => vi.restoreAllMocks());

/** A step's context with a ledger and a budget check that counts its calls. */
function context(overrides: Partial<ToolContext> = {}) {
  const calls: LlmCall[] = [];
  const checks = { count: 0 };
  const llm = {
    calls,
    checkBudget: () => {
      checks.count++;
    },
  } as unknown as ToolContext["llm"];
  return {
    context: testToolContext({ outbound: LOOPBACK_OPENED, llm, ...overrides }),
    calls,
    checks,
  };
}

const config = (over: Partial<WebSearchConfig> = {}): WebSearchConfig => ({
  provider: "tavily",
  apiKey: provider.key,
  baseUrl: provider.origin,
  priceUsd: 0.008,
  timeoutMs: 2_000,
  ...over,
});

async function search(input: unknown, c: WebSearchConfig, ctx = context()) {
  const tool = createWebSearchTool(c);
  const result = await tool.run(WebSearchInput().parse(input), ctx.context);
  return { ...result, ...ctx };
}

describe("web_search over Tavily's API", () => {
  it("answers titles, URLs and snippets, asking with the key as a bearer token, the query and the count", async () => {
    const { value, calls, checks } = await search(
      { query: "kyoto temples", max_results: 3 },
      config(),
    );
    expect(value).toEqual({
      query: "kyoto temples",
      results: [1, 2, 3].map((i) => ({
        title: `Result ${i} for kyoto temples`,
        url: `https://example.com/${i}?q=kyoto%20temples`,
        snippet: `Snippet ${i} about kyoto temples.`,
      })),
    });
    expect(provider.requests).toHaveLength(1);
    const [request] = provider.requests;
    expect(request).toMatchObject({
      method: "POST",
      path: "/search",
      body: { query: "kyoto temples", max_results: 3, search_depth: "basic", topic: "general" },
    });
    expect(request!.headers.authorization).toBe(`Bearer ${provider.key}`);
    expect(request!.headers["content-type"]).toBe("application/json");
    // The budget is checked before, and the search is a line of the cost ledger after.
    expect(checks.count).toBe(1);
    expect(calls).toEqual([
      expect.objectContaining({
        purpose: "web_search",
        model: "tavily",
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.008,
      }),
    ]);
  });

  it("refuses with web_search_rejected naming the setting when the key is wrong, and charges nothing", async () => {
    const ctx = context();
    const error = await search({ query: "x" }, config({ apiKey: "wrong" }), ctx).catch((e) => e);
    expect(error).toMatchObject({ code: "web_search_rejected" });
    expect(error.message).toContain("STACKVM_WEB_SEARCH_API_KEY");
    expect(error.message).not.toContain("wrong");
    expect(ctx.calls).toEqual([]);
  });

  it("answers a busy provider (429, 5xx) and an answer of another shape as retryable", async () => {
    for (const [status, body] of [
      [429, '{"detail":{"error":"rate limit"}}'],
      [503, "down"],
      [200, "<html>not json</html>"],
      [200, '{"results": "not a list"}'],
    ] as const) {
      provider.failNext(status, body);
      const error = await search({ query: "x" }, config()).catch((e) => e);
      expect(error, `${status} ${body}`).toMatchObject({
        kind: "retryable",
        code: "web_search_unavailable",
      });
    }
  });
});

describe("web_search over Brave Search's API", () => {
  it("answers titles, URLs and plain snippets, asking with X-Subscription-Token, q and count", async () => {
    const { value, calls } = await search(
      { query: "kyoto", max_results: 2 },
      config({ provider: "brave", priceUsd: 0.005 }),
    );
    expect(value).toEqual({
      query: "kyoto",
      results: [1, 2].map((i) => ({
        title: `Result ${i} for kyoto`,
        url: `https://example.com/${i}?q=kyoto`,
        // Brave's <strong> marks are taken out.
        snippet: `Snippet ${i} about kyoto.`,
      })),
    });
    const [request] = provider.requests;
    expect(request).toMatchObject({
      method: "GET",
      path: "/res/v1/web/search",
      query: { q: "kyoto", count: "2" },
    });
    expect(request!.headers["x-subscription-token"]).toBe(provider.key);
    expect(request!.headers.accept).toBe("application/json");
    expect(request!.headers.authorization).toBeUndefined();
    expect(calls).toEqual([expect.objectContaining({ model: "brave", cost_usd: 0.005 })]);
  });

  it("answers no results when Brave found nothing (an answer without web)", async () => {
    const { value } = await search({ query: "nothing at all" }, config({ provider: "brave" }));
    expect(value).toEqual({ query: "nothing at all", results: [] });
  });

  it("refuses a wrong token (Brave's 422 SUBSCRIPTION_TOKEN_INVALID) as web_search_rejected", async () => {
    const error = await search({ query: "x" }, config({ provider: "brave", apiKey: "no" })).catch(
      (e) => e,
    );
    expect(error).toMatchObject({ code: "web_search_rejected" });
  });
});

describe("web_search refuses", () => {
  it("refuses with web_search_not_configured, naming the settings, when no provider is set", async () => {
    const [tool] = webTools({ search: NO_WEB_SEARCH });
    const ctx = context();
    const error = await tool!.run({ query: "x", max_results: 5 }, ctx.context).catch((e) => e);
    expect(error).toMatchObject({ kind: "step", code: "web_search_not_configured" });
    expect(error.message).toMatch(/STACKVM_WEB_SEARCH_PROVIDER.*STACKVM_WEB_SEARCH_API_KEY/);
    expect(tool!.description).toContain("Not configured in this deployment");
    expect(provider.requests).toEqual([]);
    expect(ctx.calls).toEqual([]);
  });

  it("refuses an oversized query, wrong types and unknown fields at the input", () => {
    for (const bad of [
      { query: "x".repeat(401) },
      { query: "" },
      { query: "   " },
      { query: 42 },
      { query: ["a"] },
      { query: "x", max_results: 21 },
      { query: "x", max_results: 0 },
      { query: "x", max_results: "5" },
      { query: "x", max_results: 2.5 },
      { query: "x", api_key: "mine" },
      {},
    ]) {
      expect(WebSearchInput().safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(
      WebSearchInput().safeParse({ query: "x".repeat(401) }).error?.issues[0]?.message,
    ).toMatch(/longer than 400/);
  });

  it("refuses a provider base URL on loopback unless the operator opened it", async () => {
    const ctx = context({ outbound: { openRanges: [], ownPorts: new Set() } });
    const error = await search({ query: "x" }, config(), ctx).catch((e) => e);
    expect(error).toMatchObject({ code: "address_forbidden" });
    expect(provider.requests).toEqual([]);
  });
});
