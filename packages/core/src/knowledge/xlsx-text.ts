/**
 * The text of a spreadsheet (`.xlsx`), read by exceljs: each sheet a
 * `# {name}` heading, each row under its header row a paragraph of
 * `column: value` pairs, as a CSV is (`extract.ts`). Loaded with the first
 * spreadsheet, not at start (exceljs and its zip reader are about 1 MB).
 *
 * A spreadsheet is a zip archive, so before exceljs inflates it the archive's
 * own directory is read: an archive that says it inflates to more than
 * `MAX_XLSX_INFLATED_BYTES`, or holds more than 10,000 entries, is refused
 * unread (a zip bomb of a few KiB that would fill the worker's memory).
 */
import { ExtractError } from "./extract-error";
import { rowsText } from "./rows-text";

/** The most an archive may inflate to, by its own directory (what exceljs holds in memory). */
export const MAX_XLSX_INFLATED_BYTES = 200 * 1024 * 1024;
const MAX_ENTRIES = 10_000;

/**
 * The inflated size the archive's central directory declares for all its
 * entries. Throws `xlsx_unreadable` when the bytes are no zip archive.
 */
export function declaredZipSize(bytes: Uint8Array): { entries: number; inflated: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end-of-central-directory record: its signature within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = bytes.byteLength - 22; i >= Math.max(0, bytes.byteLength - 65_557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new ExtractError(
      "xlsx_unreadable",
      "the file is not an .xlsx spreadsheet (no zip archive): save it as Excel Workbook (.xlsx), or upload it as CSV",
    );
  }
  const entries = view.getUint16(eocd + 10, true);
  let offset = view.getUint32(eocd + 16, true);
  let inflated = 0;
  for (let n = 0; n < entries; n++) {
    if (offset + 46 > bytes.byteLength || view.getUint32(offset, true) !== 0x02014b50) {
      throw new ExtractError(
        "xlsx_unreadable",
        "the spreadsheet's zip directory is damaged: save it again",
      );
    }
    const size = view.getUint32(offset + 24, true);
    // A size of 0xFFFFFFFF is ZIP64's "look elsewhere": treated as over any limit.
    inflated += size === 0xffffffff ? Number.POSITIVE_INFINITY : size;
    offset +=
      46 +
      view.getUint16(offset + 28, true) +
      view.getUint16(offset + 30, true) +
      view.getUint16(offset + 32, true);
  }
  return { entries, inflated };
}

/** A cell's value as text: a formula by its result, rich text by its runs, a date as ISO. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== "object") return String(value);
  const v = value as Record<string, unknown>;
  if ("result" in v) return cellText(v.result);
  if (Array.isArray(v.richText)) return v.richText.map((run) => String(run?.text ?? "")).join("");
  if ("text" in v) return String(v.text);
  if ("error" in v) return String(v.error);
  return "";
}

/** The spreadsheet's text (see the module's comment). */
export async function xlsxText(bytes: Uint8Array): Promise<string> {
  const { entries, inflated } = declaredZipSize(bytes);
  if (entries > MAX_ENTRIES || inflated > MAX_XLSX_INFLATED_BYTES) {
    throw new ExtractError(
      "document_too_long",
      `the spreadsheet inflates to more than ${MAX_XLSX_INFLATED_BYTES} bytes (or holds over ${MAX_ENTRIES} parts): split it into smaller workbooks, or upload its sheets as CSV`,
    );
  }
  const { default: ExcelJS } = await import("exceljs");
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as never,
    );
  } catch (error) {
    throw new ExtractError(
      "xlsx_unreadable",
      `the spreadsheet cannot be read (${String((error as Error)?.message ?? error).slice(0, 200)}): save it again as Excel Workbook (.xlsx), or upload it as CSV`,
    );
  }
  const sheets: string[] = [];
  workbook.eachSheet((sheet) => {
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const values = Array.isArray(row.values) ? row.values.slice(1) : [];
      rows.push(Array.from(values, (value) => cellText(value)));
    });
    const text = rowsText(rows);
    if (text !== "") sheets.push(`# ${sheet.name}\n\n${text}`);
  });
  return sheets.join("\n\n");
}
