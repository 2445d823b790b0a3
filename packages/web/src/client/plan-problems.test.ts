import type { PlanProblem } from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { placeProblems, problemsOf } from "./plan-problems";

const problem = (seq_no: number | null, path: string): PlanProblem => ({
  seq_no,
  path,
  code: "c",
  message: "m",
  hint: "h",
});
const plan = [{ seq_no: 10 }, { seq_no: 20 }, { seq_no: 30 }];

describe("placeProblems", () => {
  it("places a problem by the index at the head of its path", () => {
    const placed = placeProblems(plan, [problem(20, "[1].parameters.tool_name")]);
    expect([...placed.byIndex.keys()]).toEqual([1]);
  });

  it("falls back to the seq_no when the path names no instruction", () => {
    const placed = placeProblems(plan, [problem(30, "")]);
    expect(placed.byIndex.get(2)).toHaveLength(1);
  });

  it("keeps problems of the whole plan apart", () => {
    const placed = placeProblems(plan, [problem(null, ""), problem(99, "[7]")]);
    expect(placed.general).toHaveLength(2);
    expect(placed.byIndex.size).toBe(0);
  });
});

describe("problemsOf", () => {
  it("reads details.problems and ignores what is not a problem", () => {
    expect(problemsOf({ problems: [problem(1, "[0]"), 5] })).toHaveLength(1);
    expect(problemsOf({ other: 1 })).toBeNull();
    expect(problemsOf(undefined)).toBeNull();
  });
});
