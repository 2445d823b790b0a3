/**
 * The conformance suite of the `Blobs` port: content addressing, absent blobs,
 * deleting by prefix without touching a sibling prefix, and presigned URLs
 * (fetched when the fixture can fetch them).
 */
import { randomUUID } from "node:crypto";
import type { Blobs } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejection } from "./item-store.suite";

export interface BlobsFixture {
  blobs: Blobs;
  /** Reads a presigned URL without credentials, when the backend serves one. */
  fetch?(url: string): Promise<Uint8Array | null>;
  close?(): Promise<void>;
}

const HELLO_SHA256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

/** Registers the suite for one adapter; `open` is called once, before the tests. */
export function blobsSuite(name: string, open: () => Promise<BlobsFixture>): void {
  describe(`Blobs conformance: ${name}`, () => {
    let fixture: BlobsFixture | undefined;
    let blobs: Blobs;
    beforeAll(async () => {
      fixture = await open();
      blobs = fixture.blobs;
    });
    afterAll(async () => {
      await fixture?.close?.();
    });

    const prefix = () => `T#conformance/${randomUUID()}`;
    const text = (s: string) => new TextEncoder().encode(s);

    it("stores bytes under their SHA-256 and reads them back", async () => {
      const p = prefix();
      const ref = await blobs.put(p, text("hello"), "text/plain");
      expect(ref).toEqual({ $ref: "s3", size: 5, sha256: HELLO_SHA256 });
      expect(await blobs.get(p, HELLO_SHA256)).toEqual(text("hello"));
      expect(await blobs.put(p, text("hello"), "text/plain")).toEqual(ref);
    });

    it("keeps every byte value and empty blobs", async () => {
      const p = prefix();
      const all = Uint8Array.from([...Array(256).keys()]);
      const ref = await blobs.put(p, all, "application/octet-stream");
      expect(await blobs.get(p, ref.sha256)).toEqual(all);
      const empty = await blobs.put(p, new Uint8Array(0), "application/octet-stream");
      expect(empty.size).toBe(0);
      expect(await blobs.get(p, empty.sha256)).toEqual(new Uint8Array(0));
    });

    it("answers null for a blob that is absent", async () => {
      expect(await blobs.get(prefix(), HELLO_SHA256)).toBeNull();
    });

    it("deletes everything under a prefix and nothing under a sibling", async () => {
      const p = prefix();
      await blobs.put(`${p}/task1`, text("a"), "text/plain");
      const nested = await blobs.put(`${p}/task1/files`, text("b"), "text/plain");
      const sibling = await blobs.put(`${p}/task10`, text("c"), "text/plain");
      await blobs.deletePrefix(`${p}/task1`);
      expect(await blobs.get(`${p}/task1/files`, nested.sha256)).toBeNull();
      expect(await blobs.get(`${p}/task10`, sibling.sha256)).toEqual(text("c"));
      await blobs.deletePrefix(prefix());
    });

    it("deletes the objects under a prefix written before a time, and only those", async () => {
      const p = prefix();
      const old = await blobs.put(`${p}/a`, text("old"), "text/plain");
      const sibling = await blobs.put(`${p}/ab`, text("sibling"), "text/plain");
      expect(await blobs.deleteOlderThan(`${p}/a`, new Date(Date.now() - 3_600_000))).toBe(0);
      expect(await blobs.get(`${p}/a`, old.sha256)).toEqual(text("old"));
      expect(await blobs.deleteOlderThan(`${p}/a`, new Date(Date.now() + 3_600_000))).toBe(1);
      expect(await blobs.get(`${p}/a`, old.sha256)).toBeNull();
      expect(await blobs.get(`${p}/ab`, sibling.sha256)).toEqual(text("sibling"));
      await blobs.deletePrefix(p);
    });

    it("presigns a URL that names the object", async () => {
      const p = prefix();
      const ref = await blobs.put(p, text("hello"), "text/plain");
      const url = await blobs.presign(p, ref.sha256, 60);
      expect(url).toContain(ref.sha256);
      if (fixture?.fetch) expect(await fixture.fetch(url)).toEqual(text("hello"));
    });

    it("refuses prefixes and hashes that could escape the prefix", async () => {
      for (const bad of ["", "/abs", "trailing/", "a//b", "a/../b"]) {
        expect((await rejection(blobs.put(bad, text("x"), "text/plain"))).message).toMatch(
          /prefix/,
        );
      }
      expect((await rejection(blobs.get(prefix(), "../x"))).message).toMatch(/sha256/);
    });
  });
}
