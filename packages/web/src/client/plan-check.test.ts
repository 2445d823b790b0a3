import { describe, expect, it } from "vitest";
import { checkPlanText } from "./plan-check";

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

  it("leaves every other judgement to the API: a wait, a StackVM tool-as-type, even a bad shape", () => {
    for (const plan of [
      [{ seq_no: 0, type: "wait", parameters: { seconds: 5 } }],
      [{ seq_no: 0, type: "vector_search", parameters: { query: "x" } }],
      { not: "a plan" },
    ]) {
      const result = checkPlanText(JSON.stringify(plan));
      expect(result.problems).toEqual([]);
      expect(result.plan).toEqual(plan);
    }
  });
});
