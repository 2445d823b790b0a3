/**
 * The step's stores over each `ItemStore` adapter: a group's held results
 * (`HeldResultStore`: get, put once, list) and the commit write's refusal of a
 * value the store cannot hold (`TaskStore.putCommit` answers `StoreRefusedError`,
 * so that the step makes an error commit of it, and of nothing else).
 */
import { randomUUID } from "node:crypto";
import {
  type CommitRecord,
  HeldResultStore,
  type HeldValue,
  type ItemStore,
  TaskStore,
} from "@stackvm/core";
import { beforeAll, describe, expect, it } from "vitest";

const held = (seq: number, text: string): HeldValue => ({
  seq_no: seq,
  base: "c0",
  inputs: { prompt: text },
  outputs: { out: text },
  pc_after: seq + 1,
  details: null,
  error: null,
  llm_calls: [],
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: "2026-01-01T00:00:01.000Z",
  duration_ms: 1000,
});

/** Registers the suite for one adapter; `open` is called once, before the tests. */
export function stepStoresSuite(name: string, open: () => Promise<ItemStore>): void {
  describe(`step stores conformance: ${name}`, () => {
    let items: ItemStore;
    beforeAll(async () => {
      items = await open();
    });
    const branch = () => ({ pk: `T#conformance/${randomUUID()}`, bid: "b1" });

    it("holds a member's result once, and lists the group's results in the order asked", async () => {
      const store = new HeldResultStore(items);
      const at = branch();
      expect(await store.get(at, "c0", 1)).toBeNull();
      expect(await store.putOnce(at, held(1, "first"))).toBe(true);
      // A second delivery of the member keeps the first result.
      expect(await store.putOnce(at, held(1, "second"))).toBe(false);
      expect(await store.get(at, "c0", 1)).toMatchObject({ seq_no: 1, outputs: { out: "first" } });
      await store.putOnce(at, held(3, "third"));
      const listed = await store.list(at, "c0", [3, 2, 1]);
      expect(listed.map((r) => r?.outputs.out ?? null)).toEqual(["third", null, "first"]);
      // Another group's base and another branch see none of them.
      expect(await store.get(at, "c9", 1)).toBeNull();
      expect(await store.get({ ...at, bid: "b2" }, "c0", 1)).toBeNull();
    });

    it("refuses a commit holding a value the store cannot hold as a store refusal", async () => {
      const tasks = new TaskStore(items);
      const commit = {
        pk: branch().pk,
        sk: "C#b1#00000001",
        commit_id: "b1-1",
        outputs: { x: Number.POSITIVE_INFINITY },
      } as unknown as CommitRecord;
      const refused = await tasks.putCommit(commit).catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: "StoreRefusedError", code: "store_refused" });
      expect((refused as Error).message).toMatch(/Infinity/);
    });
  });
}
