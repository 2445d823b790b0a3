/**
 * The conformance suite of the `ItemStore` port: every adapter (memory, DynamoDB
 * through dynalite, DynamoDB Local) must pass it unchanged. Each test works in its
 * own partitions, so one store (one table) serves the whole suite.
 */
import { randomUUID } from "node:crypto";
import { type Item, type ItemStore, mergeUpdated } from "@stackvm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

export interface ItemStoreFixture {
  store: ItemStore;
  close?(): Promise<void>;
}

/** Registers the suite for one adapter; `open` is called once, before the tests. */
export function itemStoreSuite(name: string, open: () => Promise<ItemStoreFixture>): void {
  describe(`ItemStore conformance: ${name}`, () => {
    let fixture: ItemStoreFixture | undefined;
    let store: ItemStore;
    beforeAll(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.close?.();
    });

    const partition = () => `T#conformance/${randomUUID()}`;

    describe("put and get", () => {
      it("reads back what it wrote and null for a missing key", async () => {
        const pk = partition();
        const item = {
          pk,
          sk: "A",
          n: 1,
          s: "x",
          b: true,
          z: null,
          l: [1, "a"],
          m: { k: { d: 2 } },
        };
        await store.put(item);
        expect(await store.get({ pk, sk: "A" })).toEqual(item);
        expect(await store.get({ pk, sk: "B" })).toBeNull();
      });

      it("drops undefined attributes as JSON does", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", gone: undefined, m: { keep: 1, gone: undefined } });
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", m: { keep: 1 } });
      });

      it("replaces the whole item on an unconditional put", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", old: 1 });
        await store.put({ pk, sk: "A", fresh: 2 });
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", fresh: 2 });
      });

      it("does not let a caller change stored state through returned objects", async () => {
        const pk = partition();
        const item = { pk, sk: "A", m: { v: 1 } };
        await store.put(item);
        item.m.v = 2;
        const read = (await store.get({ pk, sk: "A" })) as unknown as { m: { v: number } };
        read.m.v = 3;
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", m: { v: 1 } });
      });

      it("refuses an item over 400 KB as too large", async () => {
        const pk = partition();
        const error = await rejection(store.put({ pk, sk: "A", big: "x".repeat(410 * 1024) }));
        expect(error.kind).toBe("too_large");
        expect(error.message).not.toContain(pk);
      });

      it("refuses, with a TypeError and no stack overflow, an item nested past 32 levels", async () => {
        const pk = partition();
        let deep: unknown = 1;
        for (let i = 0; i < 5_000; i++) deep = { a: deep };
        const error = await rejection(store.put({ pk, sk: "A", deep }));
        expect(error.name).toBe("TypeError");
        expect(error.message).toMatch(/more than 32 levels/);
        let fits: unknown = 1;
        // DynamoDB counts the attribute as the first level: 31 lists inside it fit
        // (DynamoDB Local refuses 32). Values deeper than 16 go to the blob store.
        for (let i = 0; i < 31; i++) fits = [fits];
        await store.put({ pk, sk: "B", fits });
        expect(await store.get({ pk, sk: "B" })).toEqual({ pk, sk: "B", fits });
      });

      it("stores a JSON-parsed '__proto__' key nowhere: refused, not turned into a prototype", async () => {
        const pk = partition();
        const value = JSON.parse('{"__proto__": {"polluted": true}}');
        expect((await rejection(store.put({ pk, sk: "A", value }))).name).toBe("TypeError");
        await store.put({ pk, sk: "B", m: {} });
        const update = store.update({ pk, sk: "B" }, { set: [[["m", "x"], value]] });
        expect((await rejection(update)).name).toBe("TypeError");
      });
    });

    describe("conditions", () => {
      it("creates with exists: false once, then conflicts", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", v: 1 }, { exists: false });
        const error = await rejection(store.put({ pk, sk: "A", v: 2 }, { exists: false }));
        expect(error.kind).toBe("conflict");
        expect(error.name).toBe("ConflictError");
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", v: 1 });
      });

      it("overwrites an expired item with orExpiredBefore, not a live one", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", ttl: 1000 });
        await store.put({ pk, sk: "B" });
        expect(
          (await rejection(store.put({ pk, sk: "A" }, { exists: false, orExpiredBefore: 1000 })))
            .kind,
        ).toBe("conflict");
        expect(
          (await rejection(store.put({ pk, sk: "B" }, { exists: false, orExpiredBefore: 5000 })))
            .kind,
        ).toBe("conflict");
        await store.put({ pk, sk: "A", v: 2 }, { exists: false, orExpiredBefore: 1001 });
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", v: 2 });
      });

      it("requires the item with exists: true and does not create it", async () => {
        const pk = partition();
        const error = await rejection(
          store.update({ pk, sk: "A" }, { set: [[["v"], 1]] }, { exists: true }),
        );
        expect(error.kind).toBe("conflict");
        expect(await store.get({ pk, sk: "A" })).toBeNull();
      });

      it("compares with equals, null meaning absent or null", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", head: "c1", gone: null });
        await store.update(
          { pk, sk: "A" },
          { set: [[["head"], "c2"]] },
          { equals: { head: "c1", gone: null, never: null } },
        );
        expect(
          (
            await rejection(
              store.update(
                { pk, sk: "A" },
                { set: [[["head"], "c3"]] },
                { equals: { head: "c1" } },
              ),
            )
          ).kind,
        ).toBe("conflict");
        expect(
          (await rejection(store.delete({ pk, sk: "A" }, { equals: { head: null } }))).kind,
        ).toBe("conflict");
        expect((await rejection(store.put({ pk, sk: "A" }, { equals: { head: 2 } }))).kind).toBe(
          "conflict",
        );
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", head: "c2", gone: null });
      });

      it("compares with below, absent counting as below", async () => {
        const pk = partition();
        await store.update({ pk, sk: "A" }, { set: [[["seq"], 4]] }, { below: { seq: 5 } });
        await store.update({ pk, sk: "A" }, { set: [[["seq"], 5]] }, { below: { seq: 5 } });
        expect(
          (
            await rejection(
              store.update({ pk, sk: "A" }, { set: [[["seq"], 6]] }, { below: { seq: 5 } }),
            )
          ).kind,
        ).toBe("conflict");
        await store.put({ pk, sk: "B", seq: "text" });
        expect((await rejection(store.delete({ pk, sk: "B" }, { below: { seq: 5 } }))).kind).toBe(
          "conflict",
        );
      });

      it("refuses a map or a list in equals and in a filter", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", m: { a: 1 }, l: [1] });
        expect(
          (await rejection(store.put({ pk, sk: "A" }, { equals: { m: { a: 1 } } }))).message,
        ).toMatch(/takes a string/);
        expect((await rejection(store.query({ pk, filter: { l: [1] } }))).message).toMatch(
          /takes a string/,
        );
      });

      it("deletes only when the condition holds", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", v: 1 });
        expect((await rejection(store.delete({ pk, sk: "A" }, { equals: { v: 2 } }))).kind).toBe(
          "conflict",
        );
        await store.delete({ pk, sk: "A" }, { equals: { v: 1 } });
        expect(await store.get({ pk, sk: "A" })).toBeNull();
        await store.delete({ pk, sk: "missing" });
      });
    });

    describe("get with attributes", () => {
      it("reads back only the key and the named top-level attributes", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", plan: [{ a: 1 }], vars: { x: 1 }, head: null, n: 0 });
        expect(
          await store.get({ pk, sk: "A" }, { attributes: ["vars", "head", "n", "missing"] }),
        ).toEqual({ pk, sk: "A", vars: { x: 1 }, head: null, n: 0 });
        expect(await store.get({ pk, sk: "B" }, { attributes: ["vars"] })).toBeNull();
      });
    });

    describe("update", () => {
      it("answers only what changed with returns: updated, and mergeUpdated rebuilds the item", async () => {
        const pk = partition();
        const before = {
          pk,
          sk: "A",
          plan: ["a", "long", "list"],
          vars: { a: 1, b: 2 },
          usage: { steps: 4, cost: 0.5 },
          gsi1pk: "SWEEP#1",
          gsi1sk: "x",
          head: "c1",
        };
        await store.put(before);
        const changes = {
          set: [
            [["head"], "c2"],
            [["vars", "c"], { deep: [1, "two"] }],
            [["vars", "a"], 10],
            [["chain"], ["c1"]],
          ] as Array<[string[], unknown]>,
          add: [[["usage", "steps"], 1]] as Array<[string[], number]>,
          remove: [["gsi1pk"], ["gsi1sk"]],
        };
        const answer = await store.update(
          { pk, sk: "A" },
          changes,
          { equals: { head: "c1" } },
          {
            returns: "updated",
          },
        );
        // The key and the named attributes only: DynamoDB answers a nested path's whole
        // top-level attribute, dynalite and memory only the path's own entries.
        expect(answer).toMatchObject({
          pk,
          sk: "A",
          head: "c2",
          vars: { a: 10, c: { deep: [1, "two"] } },
          chain: ["c1"],
          usage: { steps: 5 },
        });
        expect(Object.keys(answer).sort()).toEqual(["chain", "head", "pk", "sk", "usage", "vars"]);
        const merged = mergeUpdated(before, changes, answer);
        expect(merged).toEqual(await store.get({ pk, sk: "A" }));
        expect(before.vars).toEqual({ a: 1, b: 2 });
        expect(before.gsi1pk).toBe("SWEEP#1");
      });

      it("creates a missing item and returns the new item", async () => {
        const pk = partition();
        const next = await store.update(
          { pk, sk: "A" },
          {
            set: [
              [["v"], 1],
              [["m"], {}],
            ],
          },
        );
        expect(next).toEqual({ pk, sk: "A", v: 1, m: {} });
        expect(await store.get({ pk, sk: "A" })).toEqual(next);
      });

      it("sets nested paths under an existing map", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", vars: { a: 1, deep: { x: 1 } } });
        const next = await store.update(
          { pk, sk: "A" },
          {
            set: [
              [["vars", "b"], { c: [1, 2] }],
              [["vars", "deep", "y"], "z"],
            ],
          },
        );
        expect(next).toEqual({
          pk,
          sk: "A",
          vars: { a: 1, b: { c: [1, 2] }, deep: { x: 1, y: "z" } },
        });
      });

      it("refuses a nested set whose parent map is missing, without a conflict", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", scalar: 1 });
        for (const path of [
          ["vars", "x"],
          ["scalar", "x"],
        ]) {
          const error = await rejection(store.update({ pk, sk: "A" }, { set: [[path, 1]] }));
          expect(error.kind).not.toBe("conflict");
        }
        expect(await store.get({ pk, sk: "A" })).toEqual({ pk, sk: "A", scalar: 1 });
      });

      it("refuses a remove through a missing map, without a conflict", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", scalar: 1 });
        const error = await rejection(store.update({ pk, sk: "A" }, { remove: [["vars", "x"]] }));
        expect(error.kind).not.toBe("conflict");
        expect(error.message).toMatch(/map/);
      });

      it("refuses an empty or non-string index key (dynalite would take an empty one)", async () => {
        const pk = partition();
        for (const gsi1pk of ["", 7]) {
          expect(
            (await rejection(store.put({ pk, sk: "A", gsi1pk, gsi1sk: "x" }))).message,
          ).toMatch(/gsi1pk/);
        }
      });

      it("handles attribute names with odd characters and reserved words", async () => {
        const pk = partition();
        const odd = ["status", "name", "a#b", "x.y", "with space", ":colon", "size", "ttl2", "ünï"];
        await store.put({ pk, sk: "A", vars: {} });
        const next = await store.update(
          { pk, sk: "A" },
          {
            set: [
              ...odd.map((name, i): [string[], unknown] => [[name], i]),
              [["vars", "key.with.dots"], "d"],
              [["vars", "#hash"], "h"],
              [["vars", "status"], "s"],
            ],
          },
        );
        const expected: Item = {
          pk,
          sk: "A",
          vars: { "key.with.dots": "d", "#hash": "h", status: "s" },
        };
        odd.forEach((name, i) => {
          expected[name] = i;
        });
        expect(next).toEqual(expected);
        await store.update(
          { pk, sk: "A" },
          { add: [[["status"], 10]], remove: [["a#b"], ["vars", "key.with.dots"]] },
          { equals: { name: 1, "x.y": 3, "with space": 4 }, below: { ":colon": 6 } },
        );
        const read = await store.get({ pk, sk: "A" });
        expect(read?.status).toBe(10);
        expect(read).not.toHaveProperty("a#b");
        expect(read?.vars).toEqual({ "#hash": "h", status: "s" });
        const page = await store.query({ pk, filter: { "x.y": 3, "with space": 4 } });
        expect(page.items.map((i) => i.sk)).toEqual(["A"]);
      });

      it("adds to numbers, starting from 0, at the top and in maps", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", usage: { steps: 1 } });
        await store.update(
          { pk, sk: "A" },
          {
            add: [
              [["count"], 2],
              [["usage", "steps"], 1],
              [["usage", "cost"], 0.5],
            ],
          },
        );
        const next = await store.update(
          { pk, sk: "A" },
          {
            add: [
              [["count"], -5],
              [["usage", "cost"], 0.25],
            ],
          },
        );
        expect(next).toEqual({ pk, sk: "A", count: -3, usage: { steps: 2, cost: 0.75 } });
      });

      it("removes attributes, nested ones, and treats set to undefined as remove", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", a: 1, b: 2, m: { x: 1, y: 2 } });
        const next = await store.update(
          { pk, sk: "A" },
          { remove: [["a"], ["m", "x"], ["never"]], set: [[["b"], undefined]] },
        );
        expect(next).toEqual({ pk, sk: "A", m: { y: 2 } });
      });

      it("refuses overlapping paths and key attributes", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A", m: {} });
        const overlapping = await rejection(
          store.update(
            { pk, sk: "A" },
            {
              set: [
                [["m"], {}],
                [["m", "x"], 1],
              ],
            },
          ),
        );
        expect(overlapping.message).toMatch(/overlap/);
        const key = await rejection(store.update({ pk, sk: "A" }, { set: [[["sk"], "B"]] }));
        expect(key.message).toMatch(/key/);
      });

      it("sets and removes the index keys", async () => {
        const pk = partition();
        await store.put({ pk, sk: "A" });
        await store.update(
          { pk, sk: "A" },
          {
            set: [
              [["gsi1pk"], pk],
              [["gsi1sk"], "1"],
            ],
          },
        );
        expect((await store.query({ pk, index: "gsi1" })).items.map((i) => i.sk)).toEqual(["A"]);
        await store.update({ pk, sk: "A" }, { remove: [["gsi1pk"]] });
        expect((await store.query({ pk, index: "gsi1" })).items).toEqual([]);
      });
    });

    describe("batchGet and deleteMany", () => {
      it("reads over 100 keys, leaving out missing ones and duplicates", async () => {
        const pk = partition();
        for (let i = 0; i < 130; i++) await store.put({ pk, sk: key(i), i });
        const keys = [...Array(150).keys()].map((i) => ({ pk, sk: key(i) }));
        const items = await store.batchGet([...keys, { pk, sk: key(3) }]);
        expect(items.map((i) => i.i).sort((a, b) => Number(a) - Number(b))).toEqual([
          ...Array(130).keys(),
        ]);
        expect(await store.batchGet([])).toEqual([]);
      });

      it("deletes over 25 items and leaves the others", async () => {
        const pk = partition();
        for (let i = 0; i < 60; i++) await store.put({ pk, sk: key(i) });
        await store.deleteMany(
          [...Array(55).keys()].map((i) => ({ pk, sk: key(i) })).concat({ pk, sk: "missing" }),
        );
        const left = await store.query({ pk });
        expect(left.items.map((i) => i.sk)).toEqual([55, 56, 57, 58, 59].map(key));
        await store.deleteMany([]);
      });
    });

    describe("query", () => {
      async function seed(pk: string): Promise<void> {
        for (let i = 0; i < 12; i++) {
          await store.put({ pk, sk: `C#${key(i)}`, kind: i % 2 === 0 ? "even" : "odd", i });
        }
        await store.put({ pk, sk: "B#1" });
        await store.put({ pk, sk: "D#1" });
      }
      const sks = (items: Item[]) => items.map((i) => i.sk);
      const commits = (from: number, to: number) =>
        [...Array(to - from + 1).keys()].map((i) => `C#${key(from + i)}`);

      it("keeps a prefix, in order or descending", async () => {
        const pk = partition();
        await seed(pk);
        expect(sks((await store.query({ pk, prefix: "C#" })).items)).toEqual(commits(0, 11));
        expect(sks((await store.query({ pk, prefix: "C#", descending: true })).items)).toEqual(
          commits(0, 11).reverse(),
        );
        expect(sks((await store.query({ pk })).items)).toEqual(["B#1", ...commits(0, 11), "D#1"]);
        expect((await store.query({ pk: partition() })).items).toEqual([]);
      });

      it("keeps sort keys between inclusive bounds, with or without a prefix", async () => {
        const pk = partition();
        await seed(pk);
        expect(
          sks((await store.query({ pk, between: [`C#${key(3)}`, `C#${key(6)}`] })).items),
        ).toEqual(commits(3, 6));
        expect(
          sks(
            (await store.query({ pk, between: ["B", "C#~"], prefix: "C#", descending: true }))
              .items,
          ),
        ).toEqual(commits(0, 11).reverse());
        expect(sks((await store.query({ pk, between: ["A", "Z"], prefix: "D#" })).items)).toEqual([
          "D#1",
        ]);
      });

      it("orders sort keys by UTF-8 bytes, as DynamoDB does", async () => {
        const pk = partition();
        await store.put({ pk, sk: "a\u{1F600}" });
        await store.put({ pk, sk: "a\uFFFD" });
        await store.put({ pk, sk: "a~" });
        expect(sks((await store.query({ pk })).items)).toEqual(["a~", "a\uFFFD", "a\u{1F600}"]);
      });

      it("pages with a limit and a cursor until the cursor is null", async () => {
        const pk = partition();
        await seed(pk);
        for (const descending of [false, true]) {
          const seen: string[] = [];
          let cursor: string | null = null;
          let pages = 0;
          do {
            const page = await store.query({ pk, prefix: "C#", limit: 5, cursor, descending });
            expect(page.items.length).toBeLessThanOrEqual(5);
            seen.push(...sks(page.items));
            cursor = page.cursor;
            pages += 1;
          } while (cursor !== null && pages < 10);
          expect(seen).toEqual(descending ? commits(0, 11).reverse() : commits(0, 11));
          expect(pages).toBe(3);
        }
      });

      it("filters on attributes and still fills the limit", async () => {
        const pk = partition();
        await seed(pk);
        const first = await store.query({ pk, prefix: "C#", filter: { kind: "odd" }, limit: 4 });
        expect(first.items.map((i) => i.i)).toEqual([1, 3, 5, 7]);
        expect(first.cursor).not.toBeNull();
        const rest = await store.query({
          pk,
          prefix: "C#",
          filter: { kind: "odd" },
          limit: 4,
          cursor: first.cursor,
        });
        expect(rest.items.map((i) => i.i)).toEqual([9, 11]);
        expect(rest.cursor).toBeNull();
        const none = await store.query({ pk, filter: { kind: "odd", missing: null, i: 3 } });
        expect(none.items.map((i) => i.i)).toEqual([3]);
      });

      it("refuses a cursor that is not one of its own", async () => {
        const pk = partition();
        await seed(pk);
        const page = await store.query({ pk, limit: 2 });
        for (const cursor of ["not-a-cursor", page.cursor!.slice(2)]) {
          expect((await rejection(store.query({ pk, cursor }))).kind).toBe("malformed");
        }
        expect((await rejection(store.query({ pk: partition(), cursor: page.cursor }))).kind).toBe(
          "malformed",
        );
      });
    });

    describe("the gsi1 index", () => {
      it("queries items by gsi1pk in gsi1sk order, leaving out items without index keys", async () => {
        const owner = partition();
        const index = `${owner}#TASKS`;
        for (let i = 0; i < 7; i++) {
          await store.put({
            pk: `${owner}/task${i}`,
            sk: "TASK",
            gsi1pk: index,
            gsi1sk: `2026-01-0${i + 1}`,
            i,
          });
        }
        await store.put({ pk: `${owner}/bare`, sk: "TASK", gsi1pk: index });
        await store.put({ pk: `${owner}/other`, sk: "TASK" });
        const all = await store.query({ pk: index, index: "gsi1", descending: true });
        expect(all.items.map((i) => i.i)).toEqual([6, 5, 4, 3, 2, 1, 0]);
        expect(all.items[0]).toEqual({
          pk: `${owner}/task6`,
          sk: "TASK",
          gsi1pk: index,
          gsi1sk: "2026-01-07",
          i: 6,
        });

        const seen: unknown[] = [];
        let cursor: string | null = null;
        do {
          const page = await store.query({
            pk: index,
            index: "gsi1",
            limit: 3,
            cursor,
            prefix: "2026-01",
          });
          seen.push(...page.items.map((i) => i.i));
          cursor = page.cursor;
        } while (cursor !== null && seen.length < 20);
        expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);

        const between = await store.query({
          pk: index,
          index: "gsi1",
          between: ["2026-01-02", "2026-01-03"],
          filter: { i: 2 },
        });
        expect(between.items.map((i) => i.i)).toEqual([2]);
        expect((await store.query({ pk: owner, index: "gsi1" })).items).toEqual([]);
      });
    });
  });
}

function key(i: number): string {
  return String(i).padStart(4, "0");
}

/** Awaits a promise that must reject and returns what it rejected with. */
export async function rejection(promise: Promise<unknown>): Promise<Error & { kind?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { kind?: string };
  }
  throw new Error("expected the call to reject, but it resolved");
}
