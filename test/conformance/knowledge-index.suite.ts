/**
 * The conformance suite of the `KnowledgeIndex` port: nearest rows first with
 * cosine scores, rows of one kind, replacing a document's rows (twice is the same
 * as once), deleting a document and a knowledge base, several knowledge bases at
 * once, and tenant isolation: a tenant's search, read or delete never reaches
 * another tenant's rows, even under the same knowledge base and document names,
 * and a name that could point outside its own table is refused.
 */
import { randomUUID } from "node:crypto";
import type { IndexRow, KnowledgeIndex } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

export interface KnowledgeIndexFixture {
  index: KnowledgeIndex;
  close?(): Promise<void>;
}

const DIM = 8;

/** A unit vector along axis `n` (mod the dimension), slightly tilted towards axis `n + 1`. */
function axis(n: number, tilt = 0): number[] {
  const v = new Array<number>(DIM).fill(0);
  v[n % DIM] = 1;
  v[(n + 1) % DIM] = tilt;
  return v;
}

function chunk(
  documentId: string,
  position: number,
  vector: number[],
  text = `text ${documentId} ${position}`,
): IndexRow {
  return {
    kind: "chunk",
    id: `${documentId}-c${position}`,
    document_id: documentId,
    filename: `${documentId}.md`,
    position,
    text,
    data: JSON.stringify({ entities: [], relationships: [] }),
    vector,
  };
}

/** Registers the suite for one adapter; `open` is called once, before the tests. */
export function knowledgeIndexSuite(
  name: string,
  open: () => Promise<KnowledgeIndexFixture>,
): void {
  describe(`KnowledgeIndex conformance: ${name}`, () => {
    let fixture: KnowledgeIndexFixture | undefined;
    let index: KnowledgeIndex;
    beforeAll(async () => {
      fixture = await open();
      index = fixture.index;
    });
    afterAll(async () => {
      await fixture?.close?.();
    });
    /** A tenant of its own per test, so tests do not see each other's rows. */
    const tenant = () => `t${randomUUID().replaceAll("-", "").slice(0, 12)}`;

    it("returns the nearest chunks first, with cosine scores and every field", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc1", [
        chunk("doc1", 0, axis(0)),
        chunk("doc1", 1, axis(1)),
        chunk("doc1", 2, axis(2)),
      ]);
      const hits = await index.search(t, {
        knowledgeBases: ["kb"],
        kind: "chunk",
        vector: axis(1, 0.1),
        topK: 2,
      });
      expect(hits.map((h) => h.id)).toEqual(["doc1-c1", "doc1-c2"]);
      expect(hits[0]).toMatchObject({
        kind: "chunk",
        document_id: "doc1",
        filename: "doc1.md",
        position: 1,
        text: "text doc1 1",
        knowledge_base: "kb",
        data: JSON.stringify({ entities: [], relationships: [] }),
      });
      expect(hits[0]!.score).toBeCloseTo(1 / Math.sqrt(1.01), 4);
      expect(hits[0]).not.toHaveProperty("vector");
    });

    it("searches only rows of the kind asked for", async () => {
      const t = tenant();
      const entity: IndexRow = {
        ...chunk("doc1", 0, axis(3)),
        kind: "entity",
        id: "doc1-c0:e0",
        text: "Kyoto: a city",
      };
      await index.replaceDocument(t, "kb", "doc1", [chunk("doc1", 0, axis(0)), entity]);
      const entities = await index.search(t, {
        knowledgeBases: ["kb"],
        kind: "entity",
        vector: axis(0),
        topK: 5,
      });
      expect(entities.map((h) => h.id)).toEqual(["doc1-c0:e0"]);
    });

    it("replaces a document's rows, and the same replace twice leaves one copy", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc1", [
        chunk("doc1", 0, axis(0)),
        chunk("doc1", 1, axis(1)),
      ]);
      const second = [chunk("doc1", 0, axis(2), "new text")];
      await index.replaceDocument(t, "kb", "doc1", second);
      await index.replaceDocument(t, "kb", "doc1", second);
      const hits = await index.search(t, {
        knowledgeBases: ["kb"],
        kind: "chunk",
        vector: axis(2),
        topK: 10,
      });
      expect(hits.map((h) => [h.id, h.text])).toEqual([["doc1-c0", "new text"]]);
    });

    it("keeps every document of writers side by side on one knowledge base (an upload's ingest beside a plan's knowledge_add)", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc0", [chunk("doc0", 0, axis(0))]);
      const docs = Array.from({ length: 6 }, (_, n) => `doc${n + 1}`);
      await Promise.all([
        ...docs.map((d, n) => index.replaceDocument(t, "kb", d, [chunk(d, 0, axis(n + 1))])),
        // The first document replaced beside them, as a redelivered ingest does.
        index.replaceDocument(t, "kb", "doc0", [chunk("doc0", 0, axis(0), "again")]),
      ]);
      const rows = await index.get(t, "kb", ["doc0-c0", ...docs.map((d) => `${d}-c0`)]);
      expect(rows.map((r) => r.id).sort()).toEqual(["doc0-c0", ...docs.map((d) => `${d}-c0`)]);
      expect(rows.find((r) => r.id === "doc0-c0")?.text).toBe("again");
    });

    it("deletes one document's rows and keeps the others", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc1", [chunk("doc1", 0, axis(0))]);
      await index.replaceDocument(t, "kb", "doc2", [chunk("doc2", 0, axis(0, 0.2))]);
      await index.deleteDocument(t, "kb", "doc1");
      await index.deleteDocument(t, "kb", "doc-never-there");
      const hits = await index.search(t, {
        knowledgeBases: ["kb"],
        kind: "chunk",
        vector: axis(0),
        topK: 10,
      });
      expect(hits.map((h) => h.document_id)).toEqual(["doc2"]);
      expect(await index.get(t, "kb", ["doc1-c0", "doc2-c0"])).toHaveLength(1);
    });

    it("searches several knowledge bases at once and merges by score; a missing one is empty", async () => {
      const t = tenant();
      await index.replaceDocument(t, "a", "d", [chunk("d", 0, axis(0, 0.5))]);
      await index.replaceDocument(t, "b", "d", [chunk("d", 0, axis(0))]);
      const hits = await index.search(t, {
        knowledgeBases: ["a", "b", "missing"],
        kind: "chunk",
        vector: axis(0),
        topK: 5,
      });
      expect(hits.map((h) => h.knowledge_base)).toEqual(["b", "a"]);
      expect(
        await index.search(t, {
          knowledgeBases: ["missing"],
          kind: "chunk",
          vector: axis(0),
          topK: 5,
        }),
      ).toEqual([]);
    });

    it("drops a knowledge base with all its rows; dropping a missing one is no error", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc1", [chunk("doc1", 0, axis(0))]);
      await index.dropKnowledgeBase(t, "kb");
      await index.dropKnowledgeBase(t, "never");
      expect(
        await index.search(t, { knowledgeBases: ["kb"], kind: "chunk", vector: axis(0), topK: 5 }),
      ).toEqual([]);
      await index.replaceDocument(t, "kb", "doc2", [chunk("doc2", 0, axis(0))]);
      expect(
        (
          await index.search(t, { knowledgeBases: ["kb"], kind: "chunk", vector: axis(0), topK: 5 })
        ).map((h) => h.id),
      ).toEqual(["doc2-c0"]);
    });

    it("reads rows by id", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc1", [
        chunk("doc1", 0, axis(0)),
        chunk("doc1", 1, axis(1)),
      ]);
      const rows = await index.get(t, "kb", ["doc1-c1", "nope"]);
      expect(rows.map((r) => [r.id, r.position, r.text])).toEqual([["doc1-c1", 1, "text doc1 1"]]);
    });

    it("never lets one tenant see, read or delete another tenant's rows under the same names", async () => {
      const a = tenant();
      const b = tenant();
      await index.replaceDocument(a, "kb", "doc1", [chunk("doc1", 0, axis(0), "secret of a")]);
      await index.replaceDocument(b, "kb", "doc1", [chunk("doc1", 0, axis(5), "text of b")]);
      const seenByB = await index.search(b, {
        knowledgeBases: ["kb"],
        kind: "chunk",
        vector: axis(0),
        topK: 10,
      });
      expect(seenByB.map((h) => h.text)).toEqual(["text of b"]);
      expect((await index.get(b, "kb", ["doc1-c0"])).map((h) => h.text)).toEqual(["text of b"]);
      await index.deleteDocument(b, "kb", "doc1");
      await index.dropKnowledgeBase(b, "kb");
      const stillA = await index.search(a, {
        knowledgeBases: ["kb"],
        kind: "chunk",
        vector: axis(0),
        topK: 10,
      });
      expect(stillA.map((h) => h.text)).toEqual(["secret of a"]);
    });

    it.each([
      ["a tenant with a slash", "a/b", "kb"],
      ["a tenant of '..'", "..", "kb"],
      ["a knowledge base reaching up", "t1", "../t2"],
      ["a knowledge base with a quote", "t1", "kb' OR '1'='1"],
      ["an empty tenant", "", "kb"],
    ])("refuses %s before touching any table", async (_what, t, kb) => {
      await expect(
        index.search(t, { knowledgeBases: [kb], kind: "chunk", vector: axis(0), topK: 1 }),
      ).rejects.toThrow(/knowledge index/);
      await expect(index.replaceDocument(t, kb, "doc", [chunk("doc", 0, axis(0))])).rejects.toThrow(
        /knowledge index/,
      );
    });

    it("refuses a document id that could widen a delete", async () => {
      const t = tenant();
      await index.replaceDocument(t, "kb", "doc1", [chunk("doc1", 0, axis(0))]);
      await expect(index.deleteDocument(t, "kb", "x' OR '1'='1")).rejects.toThrow(
        /knowledge index/,
      );
      expect(await index.get(t, "kb", ["doc1-c0"])).toHaveLength(1);
    });
  });
}
