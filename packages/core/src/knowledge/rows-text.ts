/**
 * Rows of a table as text, for CSV and spreadsheets alike: each row under the
 * header row a paragraph of `column: value` pairs, named by the header (a
 * column without a name by its number); blank rows are left out.
 *
 * @example
 * rowsText([["city", "note"], ["Kyoto", "temples"]]) // "city: Kyoto; note: temples"
 */
export function rowsText(rows: string[][]): string {
  const [header, ...rest] = rows;
  if (!header) return "";
  return rest
    .filter((row) => row.some((cell) => cell.trim() !== ""))
    .map((row) => row.map((cell, i) => `${header[i] || `column ${i + 1}`}: ${cell}`).join("; "))
    .join("\n\n");
}
