import { describe, expect, it } from "vitest";
import { alignPlans, canonical } from "./plan-diff";

const step = (seq_no: number, value: string) => ({
  seq_no,
  type: "assign",
  parameters: { v: value },
});

describe("alignPlans", () => {
  it("pairs instructions by seq_no and says which changed", () => {
    const pairs = alignPlans([step(0, "a"), step(1, "b")], [step(0, "a"), step(1, "B")]);
    expect(pairs.map((p) => [p.key, p.change])).toEqual([
      ["0", "same"],
      ["1", "changed"],
    ]);
  });

  it("keeps a dropped instruction where it stood and shows an added one on the right only", () => {
    const pairs = alignPlans(
      [step(0, "a"), step(1, "b"), step(2, "c")],
      [step(0, "a"), step(2, "c"), step(3, "d")],
    );
    expect(pairs.map((p) => [p.key, p.change])).toEqual([
      ["0", "same"],
      ["1", "removed"],
      ["2", "same"],
      ["3", "added"],
    ]);
    expect(pairs[1]?.right).toBeUndefined();
    expect(pairs[3]?.left).toBeUndefined();
  });

  it("follows the new order when instructions moved", () => {
    const pairs = alignPlans([step(0, "a"), step(1, "b")], [step(1, "b"), step(0, "a")]);
    expect(pairs.map((p) => [p.key, p.change])).toEqual([
      ["1", "same"],
      ["0", "same"],
    ]);
  });

  it("keys an instruction without a seq_no by its position", () => {
    expect(alignPlans([{ type: "x" }], []).map((p) => [p.key, p.seq_no, p.change])).toEqual([
      ["#0", null, "removed"],
    ]);
  });
});

describe("canonical", () => {
  it("ignores key order", () => {
    expect(canonical({ a: 1, b: { c: 2, d: 3 } })).toBe(canonical({ b: { d: 3, c: 2 }, a: 1 }));
  });
});
