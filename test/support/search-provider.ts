/**
 * A scripted web search provider on loopback that speaks each provider's
 * documented API, so `web_search` is tested against the requests and answers
 * of the real services:
 *
 * - Tavily: `POST /search` with `Authorization: Bearer {key}` and a JSON body
 *   `{query, max_results, …}`; answers `{query, answer, images, results: [{title,
 *   url, content, score, raw_content}], response_time}`; a bad key is 401
 *   `{"detail": {"error": "…"}}`.
 * - Brave Search: `GET /res/v1/web/search?q=…&count=…` with
 *   `X-Subscription-Token: {key}`; answers `{type: "search", query: {original},
 *   web: {type: "search", results: [{title, url, description, …}]}}` (no `web`
 *   when nothing is found); a bad key is 422 `{type: "ErrorResponse", error: {…}}`
 *   per Brave's docs (its gateway answers 401 for a missing one).
 *
 * Every request is recorded (method, path, query, headers, body) for the tests to assert.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProviderRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage["headers"];
  body: unknown;
}

export interface ScriptedSearchProvider {
  origin: string;
  key: string;
  requests: ProviderRequest[];
  /** The next answers' HTTP status and body instead of results (500, 429, garbage). */
  failNext(status: number, body?: string): void;
  close(): Promise<void>;
}

/** The results every search finds, `n` of them at most. */
export function resultsFor(query: string, n: number) {
  return Array.from({ length: Math.min(n, 25) }, (_, i) => ({
    title: `Result ${i + 1} for ${query}`,
    url: `https://example.com/${i + 1}?q=${encodeURIComponent(query)}`,
    snippet: `Snippet ${i + 1} about ${query}.`,
  }));
}

export async function startSearchProvider(
  key = "test-search-key",
): Promise<ScriptedSearchProvider> {
  const requests: ProviderRequest[] = [];
  let failures: { status: number; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      requests.push({
        method: req.method ?? "",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      });
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(typeof value === "string" ? value : JSON.stringify(value));
      };
      const failure = failures.shift();
      if (failure) return send(failure.status, failure.body);
      if (req.method === "POST" && url.pathname === "/search") {
        if (req.headers.authorization !== `Bearer ${key}`) {
          return send(401, { detail: { error: "Unauthorized: missing or invalid API key." } });
        }
        const { query, max_results } = body as { query: string; max_results?: number };
        return send(200, {
          query,
          answer: null,
          images: [],
          results: resultsFor(query, max_results ?? 5).map((r, i) => ({
            title: r.title,
            url: r.url,
            content: r.snippet,
            score: 0.9 - i / 100,
            raw_content: null,
          })),
          response_time: 0.42,
        });
      }
      if (req.method === "GET" && url.pathname === "/res/v1/web/search") {
        if (req.headers["x-subscription-token"] !== key) {
          return send(422, {
            type: "ErrorResponse",
            error: {
              code: "SUBSCRIPTION_TOKEN_INVALID",
              detail: "The provided subscription token is invalid.",
              status: 422,
            },
          });
        }
        const q = url.searchParams.get("q") ?? "";
        const count = Number(url.searchParams.get("count") ?? 20);
        if (q === "nothing at all") return send(200, { type: "search", query: { original: q } });
        return send(200, {
          type: "search",
          query: { original: q },
          web: {
            type: "search",
            results: resultsFor(q, count).map((r) => ({
              type: "search_result",
              title: r.title,
              url: r.url,
              // Brave marks the matched words.
              description: r.snippet.replace(q, `<strong>${q}</strong>`),
              is_source_local: false,
            })),
          },
        });
      }
      send(404, { error: `no route ${req.method} ${url.pathname}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    key,
    requests,
    failNext: (status, body = "{}") => failures.push({ status, body }),
    close: () =>
      new Promise<void>((r) => {
        failures = [];
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
