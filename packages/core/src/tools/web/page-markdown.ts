/**
 * A web page's readable text as Markdown: linkedom parses the HTML into a DOM
 * (no scripts run, nothing is fetched), Mozilla's Readability (Firefox's Reader
 * View) keeps the article and leaves menus, ads and footers, and Turndown
 * writes it as Markdown. Links and images point where the page meant them
 * (relative URLs read against the URL that answered). Loaded on first use
 * (`web-fetch-run.ts`): about 730 KB of minified code, linkedom most of it,
 * that a worker's cold start never loads.
 *
 * Readability's time grows with a page's elements times their depth (a page
 * of 1,000 nested `<div>`s, 20 KB, took it 19 s), and linkedom's with deep
 * nesting too (200,000 nested `<div>`s, 2 MB, took 107 s; htmlparser2's own
 * Parser 15 s, its open-element stack shifted at each tag): a page is first
 * read in one pass of htmlparser2's Tokenizer alone, which keeps no stack, for
 * its size, depth, title and plain text; one past {@link READER_LIMITS} is
 * answered that text (headings, paragraphs and list items kept; links not).
 */
import { Readability } from "@mozilla/readability";
import { Tokenizer, type TokenizerCallbacks } from "htmlparser2";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { BLOCK_ELEMENTS as BLOCKS, HIDDEN_ELEMENTS as HIDDEN } from "../../knowledge/html-elements";

/**
 * The most elements, the deepest nesting and the most pieces of text (each `<`
 * in text and each entity cuts one) a page may have to go through the DOM and
 * Readability; past any, its text as the tokenizer read it.
 */
export const READER_LIMITS = { elements: 10_000, depth: 64, texts: 20_000 };

let turndown: TurndownService | undefined;

function markdownOf(html: string | Node): string {
  // Hidden elements go: Readability, which would drop them, is not reached when a page has no article.
  turndown ??= new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*",
  }).remove([...HIDDEN] as never);
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
  const shape = pageShape(html);
  const plain = { title: shape.title, markdown: shape.text };
  if (
    shape.elements > READER_LIMITS.elements ||
    shape.depth > READER_LIMITS.depth ||
    shape.texts > READER_LIMITS.texts
  ) {
    return plain;
  }
  try {
    return readerMarkdown(html, url, shape.title);
  } catch {
    // A page the DOM or Readability cannot take (a million `<` overflow linkedom's
    // stack): its text, as the tokenizer read it.
    return plain;
  }
}

function readerMarkdown(html: string, url: string, pageTitle: string) {
  const { document } = parseHTML(html);
  // Relative links read against the page's own <base>, else the URL that answered.
  if (!document.querySelector("base[href]")) {
    const base = document.createElement("base");
    base.setAttribute("href", url);
    (document.head ?? document.documentElement)?.prepend(base);
  }
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

const VOID = new Set("area base br col embed hr img input link meta source track wbr".split(" "));

/** What one pass of the tokenizer learns of a page. */
export interface PageShape {
  elements: number;
  /** The deepest nesting of elements, counting unclosed ones as open. */
  depth: number;
  /** Pieces of text the tokenizer cut (at each `<` that opens no tag, at each entity). */
  texts: number;
  title: string;
  /** The visible text, blocks as paragraphs, headings as `#` lines, list items as `- ` lines. */
  text: string;
}

/**
 * A page's size, depth, title and text in one pass of htmlparser2's Tokenizer:
 * time linear in the page's length whatever its nesting (no DOM, no stack of
 * open elements, only their count).
 */
export function pageShape(html: string): PageShape {
  let elements = 0;
  let texts = 0;
  let depth = 0;
  let deepest = 0;
  let hidden = 0;
  let tag = "";
  let inTitle = false;
  let title = "";
  const out: string[] = [];
  const name = (start: number, end: number) => html.slice(start, end).toLowerCase();
  const emit = (text: string) => {
    if (inTitle) {
      if (title.length < 1_000) title += text;
    } else if (hidden === 0) out.push(text);
  };
  const open = (element: string) => {
    elements++;
    if (element === "title") inTitle = true;
    if (HIDDEN.has(element)) hidden++;
    if (VOID.has(element)) {
      if (element === "br" || element === "hr") emit("\n");
      return;
    }
    depth++;
    if (depth > deepest) deepest = depth;
    const heading = /^h([1-6])$/.exec(element)?.[1];
    if (heading) emit(`\n\n${"#".repeat(Number(heading))} `);
    else if (element === "li") emit("\n- ");
    else if (BLOCKS.has(element)) emit("\n\n");
  };
  const close = (element: string) => {
    if (VOID.has(element)) return;
    depth = Math.max(0, depth - 1);
    if (element === "title") inTitle = false;
    if (HIDDEN.has(element)) hidden = Math.max(0, hidden - 1);
    else if (/^h[1-6]$/.test(element) || BLOCKS.has(element)) emit("\n\n");
    else if (element === "td" || element === "th") emit(" | ");
  };
  const none = () => {};
  const callbacks: TokenizerCallbacks = {
    onopentagname: (start, end) => {
      tag = name(start, end);
      open(tag);
    },
    onopentagend: none,
    onselfclosingtag: () => close(tag),
    onclosetag: (start, end) => close(name(start, end)),
    ontext: (start, end) => {
      texts++;
      emit(html.slice(start, end));
    },
    ontextentity: (codepoint) => {
      texts++;
      emit(String.fromCodePoint(codepoint));
    },
    onattribdata: none,
    onattribentity: none,
    onattribend: none,
    onattribname: none,
    oncdata: none,
    oncomment: none,
    ondeclaration: none,
    onprocessinginstruction: none,
    onend: none,
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
  tokenizer.write(html);
  tokenizer.end();
  const text = out
    .join("")
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { elements, depth: deepest, texts, title: title.replace(/\s+/g, " ").trim(), text };
}
