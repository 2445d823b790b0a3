import { deflateSync } from "node:zlib";

/**
 * Makes a small valid PDF with a text layer (one page per entry of `pages`, one
 * line of Helvetica per string), so that tests upload real PDFs without fixtures.
 *
 * @example
 * const bytes = makePdf([["Kyoto was the capital of Japan."]]);
 */
export function makePdf(pages: string[][]): Uint8Array {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`;
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  pages.forEach((lines, i) => {
    const pageId = pageIds[i]!;
    const escaped = lines.map((line) => line.replace(/[\\()]/g, (c) => `\\${c}`));
    const stream = `BT /F1 12 Tf 14 TL 50 780 Td ${escaped.map((l) => `(${l}) Tj T*`).join(" ")} ET`;
    objects[pageId] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId + 1} 0 R >>`;
    objects[pageId + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length;
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++)
    out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

/**
 * Makes a small PDF whose `pages` pages all draw one shared FlateDecode content
 * stream of about `decodedBytes` bytes of text operators: a few hundred KB on
 * disk that a naive reader decodes and parses once per page (the hostile
 * document of issue 30).
 *
 * @example
 * const bytes = makeSharedStreamPdf(2_000, 2 * 1024 * 1024);
 */
export function makeSharedStreamPdf(pages: number, decodedBytes: number): Uint8Array {
  const line = "BT /F1 12 Tf 50 780 Td (stream) Tj ET\n";
  const content = Buffer.from(line.repeat(Math.ceil(decodedBytes / line.length)), "latin1");
  const compressed = deflateSync(content, { level: 9 });
  const pageIds = Array.from({ length: pages }, (_, i) => 5 + i);
  const objects: Array<string | Buffer> = [];
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages} >>`;
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  objects[4] = Buffer.concat([
    Buffer.from(`<< /Length ${compressed.length} /Filter /FlateDecode >>\nstream\n`, "latin1"),
    compressed,
    Buffer.from("\nendstream", "latin1"),
  ]);
  for (const id of pageIds) {
    objects[id] =
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>";
  }
  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n", "latin1")];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = length;
    const body = objects[id]!;
    const part = Buffer.concat([
      Buffer.from(`${id} 0 obj\n`, "latin1"),
      typeof body === "string" ? Buffer.from(body, "latin1") : body,
      Buffer.from("\nendobj\n", "latin1"),
    ]);
    parts.push(part);
    length += part.length;
  }
  let tail = `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++)
    tail += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  tail += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(tail, "latin1"));
  return new Uint8Array(Buffer.concat(parts));
}
