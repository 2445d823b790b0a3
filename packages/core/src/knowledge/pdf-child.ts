/**
 * The program a child process runs to read a PDF's text (see `pdf-text.ts`).
 *
 * It is source text, not a module, so that it survives bundling: the worker's
 * Lambda bundle is one file, and a child needs a program it can be handed on
 * its command line (`node --input-type=module -e`). It reads the PDF from its
 * standard input, loads `unpdf` from the URL it is given (resolved by the
 * parent, where unpdf is installed), reads page after page (unpdf's own
 * `extractText` parses every page at once, which is what held gigabytes for a
 * PDF whose 2,000 pages share one big stream), stops at the page and character
 * caps, and writes one JSON line: `{"pages": [...]}` or `{"error": {...}}`.
 */
export const PDF_CHILD_SOURCE = `
const [unpdfUrl, maxPagesArg, maxCharsArg] = process.argv.slice(1);
const maxPages = Number(maxPagesArg);
const maxChars = Number(maxCharsArg);
const say = (message) => new Promise((resolve) => process.stdout.write(JSON.stringify(message) + "\\n", resolve));
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const bytes = new Uint8Array(Buffer.concat(chunks));
chunks.length = 0;
const { getDocumentProxy } = await import(unpdfUrl);
let document;
try {
  document = await getDocumentProxy(bytes, { stopAtErrors: true, verbosity: 0 });
} catch (error) {
  await say({ error: { code: "pdf_unreadable", detail: String(error?.message ?? error).slice(0, 200) } });
  process.exit(0);
}
if (document.numPages > maxPages) {
  await say({ error: { code: "pdf_too_long", pages: document.numPages } });
  process.exit(0);
}
const pages = [];
let chars = 0;
try {
  for (let n = 1; n <= document.numPages; n++) {
    const page = await document.getPage(n);
    const content = await page.getTextContent();
    const text = content.items
      .filter((item) => item.str != null)
      .map((item) => item.str + (item.hasEOL ? "\\n" : ""))
      .join("");
    page.cleanup();
    chars += text.length;
    if (chars > maxChars) {
      await say({ error: { code: "document_too_long", chars, page: n } });
      process.exit(0);
    }
    pages.push(text);
  }
} catch (error) {
  await say({ error: { code: "pdf_unreadable", detail: String(error?.message ?? error).slice(0, 200) } });
  process.exit(0);
}
await say({ pages });
process.exit(0);
`;
