import { describe, expect, it } from "vitest";
import { MemoryItemStore } from "./memory-item-store";

// The behaviour shared with DynamoDB is in test/conformance; these are the
// checks that only memory makes, or makes with its own words.
describe("MemoryItemStore", () => {
  it.each([
    ["a Date", new Date(0), /not JSON-compatible/],
    ["NaN", Number.NaN, /cannot be stored exactly/],
    ["an unsafe integer", 2 ** 60, /cannot be stored exactly/],
    ["a Uint8Array", new Uint8Array(1), /not JSON-compatible/],
  ])("refuses %s as a value, naming the attribute", async (_, value, message) => {
    const store = new MemoryItemStore();
    await expect(store.put({ pk: "p", sk: "s", m: { at: value } })).rejects.toThrow(message);
    await expect(store.put({ pk: "p", sk: "s", m: { at: value } })).rejects.toThrow(
      /attribute 'm'.* at at\b|item\.m\.at/,
    );
  });

  it.each([
    ["an empty pk", { pk: "", sk: "s" }, /'pk' must be a non-empty string/],
    ["a numeric index key", { pk: "p", sk: "s", gsi1pk: 1 }, /'gsi1pk' must be a non-empty string/],
  ])("refuses %s", async (_, item, message) => {
    await expect(new MemoryItemStore().put(item)).rejects.toThrow(message);
  });

  it("refuses orExpiredBefore without exists: false", async () => {
    await expect(
      new MemoryItemStore().put({ pk: "p", sk: "s" }, { orExpiredBefore: 1 }),
    ).rejects.toThrow(/only applies with 'exists: false'/);
  });

  it("refuses a filter on a key attribute and reversed bounds", async () => {
    const store = new MemoryItemStore();
    await expect(store.query({ pk: "p", filter: { sk: "x" } })).rejects.toThrow(
      /use 'pk', 'prefix' or 'between'/,
    );
    await expect(store.query({ pk: "p", between: ["b", "a"] })).rejects.toThrow(/reversed/);
  });

  it("adds only to numbers", async () => {
    const store = new MemoryItemStore();
    await store.put({ pk: "p", sk: "s", n: "1" });
    await expect(store.update({ pk: "p", sk: "s" }, { add: [[["n"], 1]] })).rejects.toThrow(
      /not a number/,
    );
  });
});
