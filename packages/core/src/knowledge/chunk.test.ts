import { describe, expect, it } from "vitest";
import { chunkText } from "./chunk";

describe("chunkText", () => {
  it("starts a chunk at each heading and names its section path", () => {
    const chunks = chunkText(
      "# Guide\n\nintro\n\n## Install\n\nnpm ci\n\n## Run\n\nnpm start\n\n# Other\n\nmore",
    );
    expect(chunks.map((c) => [c.position, c.heading])).toEqual([
      [0, "Guide"],
      [1, "Guide > Install"],
      [2, "Guide > Run"],
      [3, "Other"],
    ]);
    expect(chunks[1]!.text).toBe("## Install\n\nnpm ci");
  });

  it("packs paragraphs up to the size and overlaps a chunk cut for size with the one before", () => {
    const paragraphs = Array.from(
      { length: 6 },
      (_, i) => `Paragraph ${i} ${"word ".repeat(20).trim()}.`,
    );
    const chunks = chunkText(paragraphs.join("\n\n"), { maxChars: 250, overlapChars: 60 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(250 + 60 + 2);
    for (let i = 1; i < chunks.length; i++) {
      const tail = chunks[i - 1]!.text.slice(-30);
      expect(chunks[i]!.text).toContain(tail.slice(tail.indexOf(" ") + 1));
    }
    for (const p of paragraphs) expect(chunks.some((c) => c.text.includes(p))).toBe(true);
  });

  it("cuts a paragraph longer than a chunk at sentence ends, and a sentence longer still by size", () => {
    const chunks = chunkText(`${"A short sentence. ".repeat(40)}${"x".repeat(700)}`, {
      maxChars: 300,
      overlapChars: 0,
    });
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(300);
    expect(chunks[0]!.text.endsWith(".")).toBe(true);
  });

  it("refuses a document with more chunks than allowed", () => {
    expect(() => chunkText("a\n\nb\n\nc", { maxChars: 1, overlapChars: 0, maxChunks: 2 })).toThrow(
      /more than 2 chunks/,
    );
  });
});
