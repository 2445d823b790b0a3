/**
 * HTML to text, in one pass of `htmlparser2`'s tokenizer: time linear in the
 * document's length whatever it holds. (Regular expressions over tags, as this
 * was before, backtrack: 80,000 `<` took seconds of the shared process.)
 */
import { Parser } from "htmlparser2";
import { BLOCK_ELEMENTS as BLOCKS, HIDDEN_ELEMENTS as SKIPPED } from "./html-elements";

const HEADING = /^h([1-6])$/;

/**
 * HTML to text: headings become Markdown headings, blocks paragraphs, list items
 * `- ` lines; scripts, styles and comments go; entities are decoded.
 *
 * @example
 * htmlText("<h1>Kyoto</h1><p>Temples&nbsp;and shrines</p>") // "\n\n# Kyoto\n\n\n\nTemples and shrines\n\n" (cleaned later)
 */
export function htmlText(html: string): string {
  const out: string[] = [];
  let skipped = 0;
  let heading: { level: number; parts: string[] } | null = null;
  const emit = (text: string) => {
    if (heading) heading.parts.push(text);
    else out.push(text);
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIPPED.has(name)) skipped++;
        if (skipped > 0) return;
        const level = HEADING.exec(name)?.[1];
        // A tag inside a heading separates words, as it does on screen.
        if (heading) heading.parts.push(" ");
        if (level && !heading) heading = { level: Number(level), parts: [] };
        else if (name === "br") emit("\n");
        else if (name === "li") emit("\n- ");
        else if (BLOCKS.has(name)) emit("\n\n");
      },
      ontext(text) {
        if (skipped === 0) emit(text);
      },
      onclosetag(name) {
        if (SKIPPED.has(name)) {
          skipped = Math.max(0, skipped - 1);
          return;
        }
        if (skipped > 0) return;
        if (heading && name === `h${heading.level}`) {
          const title = heading.parts.join("").replace(/\s+/g, " ").trim();
          heading = null;
          out.push(`\n\n${"#".repeat(Number(name[1]))} ${title}\n\n`);
        } else if (heading) heading.parts.push(" ");
        else if (name === "td" || name === "th") emit(" | ");
        else if (BLOCKS.has(name)) emit("\n\n");
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();
  return out
    .join("")
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, " ").trim())
    .join("\n");
}
