/**
 * Text out of an uploaded document: plain text, Markdown, HTML, PDF (through
 * `unpdf`, pdf.js built for servers, loaded on first use), JSON and CSV. The text
 * keeps the structure the chunker splits along: Markdown headings (`# ...`),
 * blank lines between paragraphs. A file that cannot be read fails with an
 * `ExtractError` whose message says what is wrong with it, and becomes the
 * document's error.
 */
import { StackVMError } from "../errors";

/** The kinds of document ingestion reads, by content type. */
export const DOCUMENT_TYPES = {
  "text/plain": "text",
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "text/html": "html",
  "application/xhtml+xml": "html",
  "application/pdf": "pdf",
  "application/json": "json",
  "text/csv": "csv",
} as const;
export type DocumentKind = (typeof DOCUMENT_TYPES)[keyof typeof DOCUMENT_TYPES];

const EXTENSIONS: Record<string, keyof typeof DOCUMENT_TYPES> = {
  txt: "text/plain",
  text: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html",
  pdf: "application/pdf",
  json: "application/json",
  csv: "text/csv",
};

/** The most text one document may give (about 2,500 pages of prose). */
export const MAX_EXTRACTED_CHARS = 5_000_000;
/** The most pages a PDF may have. */
export const MAX_PDF_PAGES = 2_000;

/** A document that cannot be read; permanent, so the ingest records it and stops. */
export class ExtractError extends StackVMError {
  override readonly name = "ExtractError";
  constructor(code: string, message: string) {
    super("invalid", code, message);
  }
}

/**
 * The content type a document is read as: the declared one when it is known
 * (parameters such as `; charset=utf-8` dropped), else the one its file name's
 * extension says, else null (the upload is refused with the list of types).
 *
 * @example
 * documentType("application/octet-stream", "notes.md") // "text/markdown"
 */
export function documentType(
  declared: string | undefined,
  filename: string,
): keyof typeof DOCUMENT_TYPES | null {
  const base = (declared ?? "").split(";")[0]!.trim().toLowerCase();
  if (base in DOCUMENT_TYPES) return base as keyof typeof DOCUMENT_TYPES;
  const extension = filename.toLowerCase().match(/\.([a-z]+)$/)?.[1];
  return (extension && EXTENSIONS[extension]) || null;
}

/** The content types ingestion reads, for error messages. */
export const SUPPORTED_TYPES = Object.keys(DOCUMENT_TYPES).join(", ");

/** Extracts the text of a document of a known content type. */
export async function extractText(
  bytes: Uint8Array,
  contentType: keyof typeof DOCUMENT_TYPES,
): Promise<string> {
  const kind = DOCUMENT_TYPES[contentType];
  const text = kind === "pdf" ? await pdfText(bytes) : fromKind(kind, utf8(bytes));
  const cleaned = text
    .replace(/\r\n?/g, "\n")
    .replace(/[^\S\n]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (cleaned.length > MAX_EXTRACTED_CHARS) {
    throw new ExtractError(
      "document_too_long",
      `the document gives ${cleaned.length.toLocaleString("en-US")} characters of text, over the ${MAX_EXTRACTED_CHARS.toLocaleString("en-US")} one document may hold: split it into several documents`,
    );
  }
  if (cleaned === "") {
    throw new ExtractError(
      "document_empty",
      kind === "pdf"
        ? "the PDF has no text layer (a scan?): run OCR on it first, or upload its text"
        : "the document has no text",
    );
  }
  return cleaned;
}

function fromKind(kind: Exclude<DocumentKind, "pdf">, text: string): string {
  switch (kind) {
    case "text":
    case "markdown":
      return text;
    case "html":
      return htmlText(text);
    case "json":
      return jsonText(text);
    case "csv":
      return csvText(text);
  }
}

function utf8(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ExtractError(
      "not_utf8",
      "the document is not UTF-8 text: convert it to UTF-8, or upload it with its real content type (a PDF as application/pdf)",
    );
  }
  if (text.includes("\u0000")) {
    throw new ExtractError(
      "binary_content",
      "the document holds binary data (NUL bytes), not text: upload it with its real content type",
    );
  }
  return text.replace(/^\uFEFF/, "");
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  if (!isPdf(bytes)) {
    throw new ExtractError(
      "pdf_unreadable",
      "the file is not a PDF (it does not start with %PDF-): upload it with its real content type",
    );
  }
  const { getDocumentProxy, extractText: pdfjsText } = await import("unpdf");
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: pdf.js takes ownership of (detaches) the buffer it is given.
    document = await getDocumentProxy(new Uint8Array(bytes), { stopAtErrors: true, verbosity: 0 });
  } catch (error) {
    throw new ExtractError(
      "pdf_unreadable",
      `the PDF cannot be read (${String((error as Error).message ?? error).slice(0, 200)}): check that the file is complete, or export it again`,
    );
  }
  try {
    if (document.numPages > MAX_PDF_PAGES) {
      throw new ExtractError(
        "pdf_too_long",
        `the PDF has ${document.numPages} pages, over the ${MAX_PDF_PAGES} one document may have: split it`,
      );
    }
    const { text } = await pdfjsText(document, { mergePages: false });
    return text.join("\n\n");
  } catch (error) {
    if (error instanceof ExtractError) throw error;
    throw new ExtractError(
      "pdf_unreadable",
      `the PDF's text cannot be read (${String((error as Error).message ?? error).slice(0, 200)}): check that the file is complete, or export it again`,
    );
  } finally {
    // Frees the parsed document and its in-process worker.
    await document.loadingTask.destroy();
  }
}

/** True when the bytes start like a PDF (`%PDF-`, after at most 1 KiB of junk, as readers allow). */
export function isPdf(bytes: Uint8Array): boolean {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024 + 5));
  return head.includes("%PDF-");
}

const BLOCK_TAGS =
  /<\/?(p|div|section|article|header|footer|main|aside|nav|table|tr|ul|ol|dl|dt|dd|blockquote|pre|figure|figcaption|form|hr|address|details|summary)\b[^>]*>/gi;

/** HTML to text: headings become Markdown headings, blocks paragraphs; scripts, styles and comments go. */
export function htmlText(html: string): string {
  let text = html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style|noscript|template|head|svg|iframe|object)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<(script|style|noscript|template|head|svg|iframe|object)\b[^>]*\/?>/gi, " ");
  text = text.replace(
    /<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi,
    (_m, level: string, inner: string) => {
      const title = inner
        .replace(/<[^>]*>/g, " ")
        .replace(/\s+/g, " ")
        .trim();
      return `\n\n${"#".repeat(Number(level))} ${title}\n\n`;
    },
  );
  text = text
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<li\b[^>]*>/gi, "\n- ")
    .replace(/<\/(td|th)\s*>/gi, " | ")
    .replace(BLOCK_TAGS, "\n\n")
    .replace(/<[^>]*>/g, "");
  return decodeEntities(text)
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, " ").trim())
    .join("\n");
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  copy: "©",
  reg: "®",
  euro: "€",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code =
        name[1] === "x" || name[1] === "X"
          ? Number.parseInt(name.slice(2), 16)
          : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : " ";
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}

/** JSON to text: an array's items are paragraphs; an object's keys are headings. */
export function jsonText(source: string): string {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new ExtractError(
      "json_invalid",
      `the document is not valid JSON (${(error as Error).message}): fix it, or upload it as text/plain`,
    );
  }
  if (Array.isArray(value)) return value.map((item) => render(item)).join("\n\n");
  if (value !== null && typeof value === "object") {
    return Object.entries(value)
      .map(
        ([key, item]) =>
          `# ${key}\n\n${Array.isArray(item) ? item.map(render).join("\n\n") : render(item)}`,
      )
      .join("\n\n");
  }
  return render(value);
}

function render(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 1);
}

/** CSV to text: each row a paragraph of `column: value` pairs, named by the header row. */
export function csvText(source: string): string {
  const rows = parseCsv(source);
  const header = rows.shift();
  if (!header) return "";
  return rows
    .filter((row) => row.some((cell) => cell.trim() !== ""))
    .map((row) => row.map((cell, i) => `${header[i] ?? `column ${i + 1}`}: ${cell}`).join("; "))
    .join("\n\n");
}

/** RFC 4180: quoted fields may hold commas, quotes (doubled) and line breaks. */
export function parseCsv(source: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (quoted) {
      if (c === '"' && source[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && source[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (quoted)
    throw new ExtractError(
      "csv_invalid",
      "the CSV ends inside a quoted field: close the quote, or upload it as text/plain",
    );
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
