// biome-ignore-all lint/suspicious/noTemplateCurlyInString: plans write ${name} references in plain strings
import { describe, expect, it } from "vitest";
import { commitTitle, describeInstruction } from "./instruction-text";

describe("describeInstruction", () => {
  it.each([
    [
      {
        type: "calling",
        parameters: {
          tool_name: "llm_generate",
          tool_params: { prompt: "Hi" },
          output_vars: ["a"],
        },
      },
      "llm_generate(prompt: Hi) → a",
    ],
    [{ type: "assign", parameters: { final_answer: "${a}", n: 2 } }, "final_answer = ${a}; n = 2"],
    [
      {
        type: "jmp",
        parameters: { condition_prompt: "Is it?", jump_if_true: 2, jump_if_false: 3 },
      },
      "if Is it? → 2 else 3",
    ],
    [{ type: "jmp", parameters: { target_seq: 4 } }, "jump → 4"],
  ])("describes %j", (instruction, text) => {
    expect(describeInstruction(instruction)).toBe(text);
  });
});

describe("commitTitle", () => {
  it("names a step by its seq_no and type", () => {
    expect(commitTitle({ type: "step", seq_no: 3, instruction: { type: "calling" } })).toBe(
      "#3 calling",
    );
    expect(commitTitle({ type: "plan_update", seq_no: null, instruction: null })).toBe(
      "plan update",
    );
  });
});
