import { describe, expect, it } from "vitest";
import { makePdf } from "../../../../test/support/pdf";
import { csvText, documentType, ExtractError, extractText, htmlText, jsonText } from "./extract";

describe("extractText", () => {
  it("reads the text layer of a PDF, page after page", async () => {
    const text = await extractText(
      makePdf([["Kyoto was the capital."], ["Osaka has a castle."]]),
      "application/pdf",
    );
    expect(text).toContain("Kyoto was the capital.");
    expect(text.indexOf("Osaka")).toBeGreaterThan(text.indexOf("Kyoto"));
  });

  it.each([
    ["bytes that are no PDF at all", new TextEncoder().encode("hello, not a pdf")],
    ["a PDF cut in half", makePdf([["Kyoto was the capital."]]).subarray(0, 200)],
    [
      "a PDF header over garbage",
      new TextEncoder().encode(`%PDF-1.4\n${"\u00ff\u0000garbage".repeat(50)}`),
    ],
  ])("fails %s with pdf_unreadable, saying what to do", async (_what, bytes) => {
    const error = await extractText(bytes, "application/pdf").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExtractError);
    expect((error as ExtractError).code).toMatch(/pdf_unreadable|document_empty/);
    expect((error as ExtractError).message).toMatch(/PDF/);
  });

  it("refuses bytes that are not UTF-8 as text, and text with NUL bytes", async () => {
    await expect(
      extractText(new Uint8Array([0xff, 0xfe, 0x41]), "text/plain"),
    ).rejects.toMatchObject({ code: "not_utf8" });
    await expect(
      extractText(new TextEncoder().encode("a\u0000b"), "text/markdown"),
    ).rejects.toMatchObject({ code: "binary_content" });
  });

  it("refuses a document with no text", async () => {
    await expect(
      extractText(new TextEncoder().encode(" \n\n "), "text/plain"),
    ).rejects.toMatchObject({ code: "document_empty" });
  });
});

describe("htmlText", () => {
  it("keeps headings and paragraphs, drops scripts, styles and comments, decodes entities", () => {
    const text = htmlText(
      "<html><head><title>x</title><style>p{}</style></head><body><h1>Kyoto &amp; Nara</h1><script>alert(1)</script><!-- hidden --><p>Temples&nbsp;and <b>shrines</b>.</p><ul><li>one</li><li>two</li></ul></body></html>",
    );
    expect(text).toContain("# Kyoto & Nara");
    expect(text).toContain("Temples and shrines.");
    expect(text).toContain("- one");
    expect(text).not.toMatch(/alert|hidden|p\{\}/);
  });
});

describe("jsonText and csvText", () => {
  it("makes an array's items paragraphs and an object's keys headings", () => {
    expect(jsonText('[{"a":1},"two"]')).toBe('{\n "a": 1\n}\n\ntwo');
    expect(jsonText('{"Intro": "hello"}')).toBe("# Intro\n\nhello");
    expect(() => jsonText("{nope")).toThrow(ExtractError);
  });

  it("names each cell by its column, with quoted commas and line breaks", () => {
    expect(csvText('city,note\nKyoto,"temples, shrines"\n\nNara,"deer\nand parks"\n')).toBe(
      "city: Kyoto; note: temples, shrines\n\ncity: Nara; note: deer\nand parks",
    );
    expect(() => csvText('a\n"open')).toThrow(/quoted field/);
  });
});

describe("documentType", () => {
  it.each([
    ["text/markdown; charset=utf-8", "a.txt", "text/markdown"],
    ["application/octet-stream", "notes.MD", "text/markdown"],
    [undefined, "report.pdf", "application/pdf"],
    ["image/png", "x.png", null],
  ])("reads %s %s as %s", (declared, filename, expected) => {
    expect(documentType(declared, filename)).toBe(expected);
  });
});
