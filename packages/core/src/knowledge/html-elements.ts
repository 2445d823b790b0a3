/**
 * The elements both of core's HTML readers treat alike: the knowledge base's
 * text of an uploaded page (`html-text.ts`) and the web tools' Markdown of a
 * fetched one (`tools/web/page-markdown.ts`), so that a page reads the same to
 * the knowledge base and to the web tools.
 */

/** Elements whose content is not text a reader sees. */
export const HIDDEN_ELEMENTS: ReadonlySet<string> = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "head",
  "svg",
  "iframe",
  "object",
]);

/** Elements that start and end a paragraph. */
export const BLOCK_ELEMENTS: ReadonlySet<string> = new Set(
  "p div section article main header footer aside nav table tr ul ol dl dt dd blockquote pre figure figcaption form hr address details summary".split(
    " ",
  ),
);
