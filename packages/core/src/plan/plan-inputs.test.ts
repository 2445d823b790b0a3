// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans' ${name} references
import { describe, expect, it } from "vitest";
import { planInputs } from "./plan-inputs";

const generate = (seq: number, prompt: string, out: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: [out] },
});

describe("planInputs", () => {
  it("answers the variables the plan reads and never sets, in the order it first reads them", () => {
    const plan = [
      { seq_no: 0, type: "assign", parameters: { header: "Report on ${city}" } },
      generate(1, "${header}: the weather in ${city} for ${date.day}", "forecast"),
      {
        seq_no: 2,
        type: "jmp",
        parameters: {
          condition_prompt: "Is ${forecast} for ${units}?",
          jump_if_true: 3,
          jump_if_false: 3,
        },
      },
      generate(3, "${forecast}", "final_answer"),
    ];
    expect(planInputs(plan)).toEqual(["city", "date", "units"]);
  });

  it("answers none for a plan that sets everything it reads, and reads odd JSON leniently", () => {
    expect(planInputs([generate(0, "Say hi", "final_answer")])).toEqual([]);
    expect(planInputs([null, 3, "x", { type: "assign", parameters: [] }, {}])).toEqual([]);
  });

  it("leaves out text that is not a variable name and a reasoning step's text", () => {
    const plan = [
      { seq_no: 0, type: "reasoning", parameters: { chain_of_thoughts: "uses ${thought}" } },
      generate(1, "${ bad name } and ${ok}", "final_answer"),
    ];
    expect(planInputs(plan)).toEqual(["ok"]);
  });
});
