import { describe, expect, it } from "vitest";
import { makePdf, makeSharedStreamPdf } from "../../../../test/support/pdf";
import { cleanText, csvText, documentType, ExtractError, extractText, jsonText } from "./extract";
import { htmlText } from "./html-text";
import { DEFAULT_PDF_LIMITS } from "./pdf-text";

/** Milliseconds `run` holds the event loop. */
function held(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

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

describe("hostile documents (issue 30)", () => {
  // Each took seconds to tens of seconds of the shared process with the regular
  // expressions of before; the bounds are generous for a loaded machine.
  it.each([
    ["100,000 spaces and an x", () => cleanText(`${" ".repeat(100_000)}x`), "x"],
    ["a million spaces before a line end", () => cleanText(`a${" ".repeat(1_000_000)}\nb`), "a\nb"],
    ["80,000 <", () => htmlText("<".repeat(80_000)).length, 80_000],
    ["80,000 <!--", () => htmlText("<!--".repeat(80_000)).trim(), ""],
    ["40,000 unclosed <script", () => htmlText("<script ".repeat(40_000)).trim(), ""],
    ["40,000 unclosed <h1", () => htmlText("<h1 ".repeat(40_000)).trim(), ""],
    ["40,000 unclosed <p", () => htmlText("<p ".repeat(40_000)).trim(), ""],
  ])("cleans %s in linear time", (_what, run, expected) => {
    let result: unknown;
    expect(held(() => (result = run()))).toBeLessThan(2_000);
    expect(result).toEqual(expected);
  });

  it("keeps cleaning's meaning: line ends unified, trailing spaces and extra blank lines gone", () => {
    expect(cleanText("  a  \r\n\r\n\r\n\n b\t\rc \n\n")).toBe("a\n\n b\nc");
  });

  it("reads a PDF whose pages share one big stream in a child, and stops it at each cap", async () => {
    const hostile = makeSharedStreamPdf(2_000, 2 * 1024 * 1024);
    const rss = process.memoryUsage.rss();
    const failures = await Promise.all([
      extractText(hostile, "application/pdf", { ...DEFAULT_PDF_LIMITS, chars: 100_000 }).catch(
        (e: unknown) => e,
      ),
      extractText(hostile, "application/pdf", { ...DEFAULT_PDF_LIMITS, timeMs: 300 }).catch(
        (e: unknown) => e,
      ),
      extractText(hostile, "application/pdf", { ...DEFAULT_PDF_LIMITS, memoryMb: 40 }).catch(
        (e: unknown) => e,
      ),
      extractText(hostile, "application/pdf", { ...DEFAULT_PDF_LIMITS, pages: 100 }).catch(
        (e: unknown) => e,
      ),
    ]);
    expect(failures.map((e) => (e as ExtractError).code)).toEqual([
      "document_too_long",
      "pdf_too_slow",
      "pdf_too_large",
      "pdf_too_long",
    ]);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(ExtractError);
      expect((failure as ExtractError).message).toMatch(/split it/);
    }
    // The decoding happened elsewhere: this process holds what it held.
    expect((process.memoryUsage.rss() - rss) / 2 ** 20).toBeLessThan(200);
  }, 120_000);
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

  it("keeps table cells apart, breaks lines at <br>, and joins a heading's words", () => {
    const text = htmlText(
      "<h2>Caf&eacute; <em>menu</em></h2><table><tr><td>tea</td><td>3</td></tr></table>a<br>b",
    );
    expect(text).toContain("## Café menu");
    expect(text).toContain("tea | 3 |");
    expect(text).toContain("a\nb");
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
