import { describe, expect, it } from "vitest";
import { checkPlanShape, checkPlanText } from "./plan-check";

describe("checkPlanText", () => {
  it("accepts a well-formed plan", () => {
    const result = checkPlanText(
      '[{"seq_no": 0, "type": "assign", "parameters": {"final_answer": 1}}]',
    );
    expect(result.problems).toEqual([]);
    expect(result.plan).toHaveLength(1);
  });

  it("says where the JSON breaks", () => {
    const result = checkPlanText('[\n  {"seq_no": 0,}\n]');
    expect(result.plan).toBeNull();
    expect(result.problems[0]?.message).toMatch(/not valid JSON \(line 2, column \d+\)/);
  });
});

describe("checkPlanShape", () => {
  it("places each shape problem at its instruction", () => {
    const problems = checkPlanShape([
      { seq_no: 0, type: "assign", parameters: {} },
      { seq_no: 0, type: "loop", parameters: [] },
      "text",
    ]);
    expect(problems.map((p) => [p.path, p.seq_no])).toEqual([
      ["[1].seq_no", 0],
      ["[1].type", 0],
      ["[1].parameters", 0],
      ["[2]", null],
    ]);
  });

  it("refuses what is not a non-empty array", () => {
    expect(checkPlanShape({})[0]?.message).toMatch(/array/);
    expect(checkPlanShape([])[0]?.message).toMatch(/no instructions/);
  });
});
