/** Files through the API as an integrator sends them: multipart, or a presigned PUT. */
import ExcelJS from "exceljs";
import type { TestStack } from "./stack";

/** A multipart upload of one file to `/v1/files` with the stack's key (or `key`). */
export async function uploadFile(
  t: TestStack,
  file: { name: string; type: string; bytes: Uint8Array | string },
  key?: string,
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  const bytes = typeof file.bytes === "string" ? file.bytes : new Uint8Array(file.bytes);
  form.append("file", new Blob([bytes], { type: file.type }), file.name);
  const response = await fetch(`${t.url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key ?? t.apiKey}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** A presigned upload: ask for the URL, PUT the bytes, read the file (which takes them in). */
export async function presignedFile(
  t: TestStack,
  file: { name: string; type: string; bytes: Uint8Array },
): Promise<any> {
  const asked = await t.api("POST", "/v1/files", { filename: file.name, content_type: file.type });
  if (asked.status !== 201)
    throw new Error(`presign: ${asked.status} ${JSON.stringify(asked.body)}`);
  const put = await fetch(asked.body.upload_url, {
    method: "PUT",
    headers: { "content-type": file.type },
    body: new Uint8Array(file.bytes),
  });
  if (!put.ok) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  const read = await t.api("GET", `/v1/files/${asked.body.file.file_id}`);
  return read.body;
}

/** An `.xlsx` of one sheet, built by exceljs: a header row, then the rows. */
export async function makeXlsx(
  header: string[],
  rows: Array<Array<string | number>>,
): Promise<Uint8Array> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet("Data");
  sheet.addRow(header);
  for (const row of rows) sheet.addRow(row);
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}

export const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
