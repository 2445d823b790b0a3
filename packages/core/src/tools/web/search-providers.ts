/**
 * The search providers `web_search` speaks, each as its documented API has it:
 * how a search is asked (URL, key header, query and count) and where its
 * answer keeps titles, URLs and snippets. Anything else in an answer is left out.
 *
 * - Tavily: `POST {base}/search`, `Authorization: Bearer {key}`, a JSON body
 *   `{query, max_results, search_depth, topic}`; the answer's `results[]` has
 *   `title`, `url`, `content`.
 * - Brave Search: `GET {base}/res/v1/web/search?q=…&count=…`,
 *   `X-Subscription-Token: {key}`; the answer's `web.results[]` has `title`,
 *   `url`, `description` (with `<strong>` marks around the words matched).
 */
import type { GuardedRequest } from "../../net/guarded-fetch";

export type WebSearchProvider = "tavily" | "brave";

/** One result as `web_search` answers it. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

interface ProviderSpec {
  label: string;
  baseUrl: string;
  request(base: string, key: string, input: { query: string; max_results: number }): GuardedRequest;
  /** The hits of a parsed answer; throws when the answer is not the provider's shape. */
  results(answer: unknown): SearchHit[];
  /** True when an answer that is not 200 says the key is wrong, missing or out of credit. */
  refusedKey(status: number, body: string): boolean;
}

const MAX_SNIPPET_CHARS = 1_000;

/** `base` without a trailing slash, then `path`. */
const joinUrl = (base: string, path: string) => `${base.replace(/\/+$/, "")}${path}`;

export const WEB_SEARCH_PROVIDERS: Readonly<Record<WebSearchProvider, ProviderSpec>> = {
  tavily: {
    label: "Tavily",
    baseUrl: "https://api.tavily.com",
    request: (base, key, input) => ({
      url: joinUrl(base, "/search"),
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json",
        "user-agent": "stackvm/1",
      },
      body: JSON.stringify({
        query: input.query,
        max_results: input.max_results,
        search_depth: "basic",
        topic: "general",
      }),
    }),
    results: (answer) => listAt(answer, ["results"]).flatMap((r) => hit(r.title, r.url, r.content)),
    // 401: no key or a wrong one; 432/433: the plan's or the pay-as-you-go credit is spent.
    refusedKey: (status) => [401, 403, 432, 433].includes(status),
  },
  brave: {
    label: "Brave Search",
    baseUrl: "https://api.search.brave.com",
    request: (base, key, input) => {
      const url = new URL(joinUrl(base, "/res/v1/web/search"));
      url.searchParams.set("q", input.query);
      url.searchParams.set("count", String(input.max_results));
      return {
        url: url.href,
        method: "GET",
        headers: {
          "x-subscription-token": key,
          accept: "application/json",
          "user-agent": "stackvm/1",
        },
      };
    },
    // No `web` at all: Brave found nothing.
    results: (answer) =>
      (isObject(answer) && answer.web === undefined
        ? []
        : listAt(answer, ["web", "results"])
      ).flatMap((r) => hit(r.title, r.url, r.description)),
    // A wrong token is 422 `SUBSCRIPTION_TOKEN_INVALID`; a missing one, 401 from its gateway.
    refusedKey: (status, body) =>
      status === 401 || status === 403 || (status === 422 && body.includes("SUBSCRIPTION_TOKEN")),
  },
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The array of objects at `path`, or a throw when the answer has none there. */
function listAt(answer: unknown, path: string[]): Record<string, unknown>[] {
  let at: unknown = answer;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  if (!Array.isArray(at)) throw new Error(`no array at ${path.join(".")}`);
  return at.filter(isObject);
}

/** One hit, when it has an http(s) URL; titles and snippets as plain, bounded text. */
function hit(title: unknown, url: unknown, snippet: unknown): SearchHit[] {
  if (typeof url !== "string" || !/^https?:\/\//i.test(url) || !URL.canParse(url)) return [];
  return [
    {
      title: plainText(title).slice(0, 300),
      url,
      snippet: plainText(snippet).slice(0, MAX_SNIPPET_CHARS),
    },
  ];
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  "#39": "'",
  "#x27": "'",
  nbsp: " ",
};

/** Text without markup (Brave marks matched words with `<strong>`) and with the common entities read. */
function plainText(value: unknown): string {
  if (typeof value !== "string") return "";
  return value
    .replace(/<[^>]{0,200}>/g, "")
    .replace(/&(amp|lt|gt|quot|#39|#x27|nbsp);/g, (_, name: string) => ENTITIES[name] ?? "")
    .replace(/\s+/g, " ")
    .trim();
}
