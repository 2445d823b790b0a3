import { describe, expect, it } from "vitest";
import { neutralizeBidi, parseShown } from "./bidi";

describe("parseShown", () => {
  it("shows a right-to-left override in a document name as a visible mark, written or escaped", () => {
    const literal = JSON.stringify({ filename: "invoice\u202efdp.exe" });
    const escaped = '{"filename": "invoice\\u202Efdp.exe", "n": 1}';
    expect(parseShown(literal)).toEqual({ filename: "invoice⟨U+202E⟩fdp.exe" });
    expect(parseShown(escaped)).toEqual({ filename: "invoice⟨U+202E⟩fdp.exe", n: 1 });
  });

  it.each([
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200f",
  ])("neutralizes %j and leaves other text as it is", (control) => {
    const shown = neutralizeBidi(`a${control}b שלום`);
    expect(shown).not.toContain(control);
    expect(shown).toMatch(/^a⟨U\+[0-9A-F]{4}⟩b שלום$/);
  });
});
