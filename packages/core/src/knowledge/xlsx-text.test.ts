import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { extractText } from "./extract";
import { declaredZipSize, MAX_XLSX_INFLATED_BYTES } from "./xlsx-text";

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

async function workbook(fill: (book: ExcelJS.Workbook) => void): Promise<Uint8Array> {
  const book = new ExcelJS.Workbook();
  fill(book);
  return new Uint8Array(await book.xlsx.writeBuffer());
}

describe("spreadsheets in extractText", () => {
  it("answers each sheet under its name, each row as column: value pairs", async () => {
    const bytes = await workbook((book) => {
      const a = book.addWorksheet("Sales");
      a.addRow(["region", "total"]);
      a.addRow(["Kansai", 1200]);
      a.addRow([]);
      a.addRow(["Kanto", { formula: "1+2", result: 3 }]);
      const b = book.addWorksheet("Notes");
      b.addRow(["note"]);
      b.addRow([{ richText: [{ text: "rich " }, { text: "text" }] }]);
    });
    expect(await extractText(bytes, XLSX)).toBe(
      "# Sales\n\nregion: Kansai; total: 1200\n\nregion: Kanto; total: 3\n\n# Notes\n\nnote: rich text",
    );
  });

  it("refuses bytes that are no spreadsheet with xlsx_unreadable", async () => {
    await expect(extractText(new TextEncoder().encode("name,total\n"), XLSX)).rejects.toMatchObject(
      {
        code: "xlsx_unreadable",
      },
    );
  });

  it("refuses a damaged archive with xlsx_unreadable, not a crash", async () => {
    const bytes = await workbook((book) => book.addWorksheet("A").addRow(["x"]));
    const cut = bytes.slice();
    cut.fill(0, 30, 400); // the first entry's data and header garbled, the directory intact
    await expect(extractText(cut, XLSX)).rejects.toMatchObject({ code: "xlsx_unreadable" });
  });

  it("refuses an archive whose directory says it inflates past the limit, before inflating it", async () => {
    const bytes = await workbook((book) => book.addWorksheet("A").addRow(["x"]));
    const view = new DataView(bytes.buffer);
    // Make the first central-directory entry claim a huge inflated size (a zip bomb's shape).
    let offset = 0;
    for (let i = bytes.length - 22; i >= 0; i--) {
      if (view.getUint32(i, true) === 0x06054b50) {
        offset = view.getUint32(i + 16, true);
        break;
      }
    }
    view.setUint32(offset + 24, MAX_XLSX_INFLATED_BYTES + 1, true);
    expect(declaredZipSize(bytes).inflated).toBeGreaterThan(MAX_XLSX_INFLATED_BYTES);
    await expect(extractText(bytes, XLSX)).rejects.toMatchObject({ code: "document_too_long" });
  });
});
