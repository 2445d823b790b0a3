/**
 * Text out of an uploaded document: plain text, Markdown, HTML, PDF (through
 * `unpdf`, pdf.js built for servers, in a child process with its own limits),
 * JSON, CSV and spreadsheets (`.xlsx`, through exceljs: `xlsx-text.ts`). Every step is linear in the document's length, so that no
 * document, however built, holds the shared process for long. The text
 * keeps the structure the chunker splits along: Markdown headings (`# ...`),
 * blank lines between paragraphs. A file that cannot be read fails with an
 * `ExtractError` whose message says what is wrong with it, and becomes the
 * document's error.
 */
import { ExtractError } from "./extract-error";
import { DEFAULT_PDF_LIMITS, type PdfLimits, pdfPages } from "./pdf-text";
import { rowsText } from "./rows-text";

export { ExtractError } from "./extract-error";

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
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
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
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

/** The most text one document may give (about 2,500 pages of prose). */
export const MAX_EXTRACTED_CHARS = 5_000_000;
/** The most pages a PDF may have. */
export const MAX_PDF_PAGES = DEFAULT_PDF_LIMITS.pages;

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
  pdfLimits: PdfLimits = DEFAULT_PDF_LIMITS,
): Promise<string> {
  const kind = DOCUMENT_TYPES[contentType];
  const text =
    kind === "pdf"
      ? await pdfText(bytes, pdfLimits)
      : kind === "xlsx"
        ? await (await import("./xlsx-text")).xlsxText(bytes)
        : kind === "html"
          ? // htmlparser2 (about 50 KB) loads with the first HTML document, not at start.
            (await import("./html-text")).htmlText(utf8(bytes))
          : fromKind(kind, utf8(bytes));
  const cleaned = cleanText(text);
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

/**
 * Line ends made `\n`, spaces at the end of lines dropped, runs of blank lines
 * made one, the whole trimmed. Line by line rather than by regular expressions
 * such as `/[^\S\n]+\n/`, which retries from every space of a long run of
 * spaces not followed by a line end: 100,000 spaces and an `x` took 39 s.
 *
 * @example
 * cleanText("a  \r\n\n\n\nb ") // "a\n\nb"
 */
export function cleanText(text: string): string {
  const lines: string[] = [];
  let blank = 0;
  for (const line of text.split(/\r\n|\r|\n/)) {
    const trimmed = line.trimEnd();
    blank = trimmed === "" ? blank + 1 : 0;
    if (blank < 2) lines.push(trimmed);
  }
  return lines.join("\n").trim();
}

function fromKind(kind: Exclude<DocumentKind, "pdf" | "html" | "xlsx">, text: string): string {
  switch (kind) {
    case "text":
    case "markdown":
      return text;
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

async function pdfText(bytes: Uint8Array, limits: PdfLimits): Promise<string> {
  if (!isPdf(bytes)) {
    throw new ExtractError(
      "pdf_unreadable",
      "the file is not a PDF (it does not start with %PDF-): upload it with its real content type",
    );
  }
  return (await pdfPages(bytes, limits)).join("\n\n");
}

/** True when the bytes start like a PDF (`%PDF-`, after at most 1 KiB of junk, as readers allow). */
export function isPdf(bytes: Uint8Array): boolean {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024 + 5));
  return head.includes("%PDF-");
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
  return rowsText(parseCsv(source));
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
