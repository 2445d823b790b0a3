/**
 * A web page's readable text as Markdown: linkedom parses the HTML into a DOM
 * (no scripts run, nothing is fetched), Mozilla's Readability (Firefox's Reader
 * View) keeps the article and leaves menus, ads and footers, and Turndown
 * writes it as Markdown. Links and images point where the page meant them
 * (relative URLs read against the URL that answered). Loaded on first use
 * (`web-fetch-run.ts`): about 400 KB of code a worker's cold start never loads.
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

/** Elements Readability does not reach when a page has no article (it then returns null). */
const NOT_TEXT = ["script", "style", "noscript", "template", "svg", "iframe", "object", "head"];

let turndown: TurndownService | undefined;

function markdownOf(html: string | Node): string {
  turndown ??= new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*",
  }).remove(NOT_TEXT as never);
  return turndown
    .turndown(html as never)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * The title and the Markdown of the page's main text.
 *
 * @example
 * pageMarkdown("<title>T</title><article><p>…</p></article>", "https://example.com/a").title // "T"
 */
export function pageMarkdown(html: string, url: string): { title: string; markdown: string } {
  const { document } = parseHTML(html);
  // Relative links read against the page's own <base>, else the URL that answered.
  if (!document.querySelector("base[href]")) {
    const base = document.createElement("base");
    base.setAttribute("href", url);
    (document.head ?? document.documentElement)?.prepend(base);
  }
  const pageTitle = (document.title ?? "").trim();
  // Readability changes the document it reads: the fallback reads the body as parsed.
  const body = document.body?.innerHTML ?? "";
  const article = new Readability(document as unknown as Document).parse();
  const markdown = article?.content ? markdownOf(article.content) : "";
  return {
    title: (article?.title ?? "").trim() || pageTitle,
    // A page Readability finds no article in (a list, a short page): its whole body.
    markdown: markdown.length > 0 ? markdown : markdownOf(body),
  };
}
