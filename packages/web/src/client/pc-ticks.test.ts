import { describe, expect, it } from "vitest";
import { pcTicks } from "./pc-ticks";

describe("pcTicks", () => {
  it.each([
    [1, [0, 1]],
    [3, [0, 1, 2, 3]],
    [10, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    [40, [0, 10, 20, 30, 40]],
    [41, [0, 11, 22, 33, 41]],
  ])("labels a chart whose largest PC is %i with %j", (max, ticks) => {
    expect(pcTicks(max)).toEqual(ticks);
  });

  it("never skips 1 on a small chart nor repeats a value", () => {
    for (let max = 1; max <= 60; max++) {
      const ticks = pcTicks(max);
      expect(new Set(ticks).size).toBe(ticks.length);
      if (max <= 10) expect(ticks).toContain(1);
      expect(ticks.at(-1)).toBe(max);
    }
  });
});
