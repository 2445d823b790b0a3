import { describe, expect, it } from "vitest";
import { chunkSources, citedChunks } from "./citations";

const chunk = (id: string, filename: string, position: number) => ({
  chunk_id: id,
  document_id: id.split(":")[0],
  filename,
  position,
  text: "…",
  score: 0.9,
});

describe("cited chunks", () => {
  const searched = {
    chunks: [chunk("doc_a:1f2e3d4c:0", "kyoto.md", 0), chunk("doc_b:9a8b7c6d:3", "nara.pdf", 3)],
  };
  const graphed = { kg: { entities: [], chunks: [chunk("doc_c:00aa11bb:2", "osaka.html", 2)] } };

  it("finds the chunks of searches anywhere in the outputs, and what an answer cites, in order", () => {
    const sources = chunkSources([searched, graphed, { answer: "no chunks here" }]);
    expect([...sources.keys()]).toEqual([
      "doc_a:1f2e3d4c:0",
      "doc_b:9a8b7c6d:3",
      "doc_c:00aa11bb:2",
    ]);
    const answer = { answer: "Deer roam Nara [doc_b:9a8b7c6d:3], see also [doc_c:00aa11bb:2]." };
    expect(citedChunks(answer, sources)).toEqual([
      { chunk_id: "doc_b:9a8b7c6d:3", document_id: "doc_b", filename: "nara.pdf", position: 3 },
      { chunk_id: "doc_c:00aa11bb:2", document_id: "doc_c", filename: "osaka.html", position: 2 },
    ]);
  });

  it("cites nothing for an answer without chunk ids, and ignores objects that only look alike", () => {
    const sources = chunkSources([{ chunk_id: "x", filename: 3 }, searched]);
    expect(sources.has("x")).toBe(false);
    expect(citedChunks({ answer: "plain" }, sources)).toEqual([]);
  });
});
