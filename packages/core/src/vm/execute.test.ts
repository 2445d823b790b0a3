import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { LlmSession } from "../llm/types";
import type { Instruction, Plan } from "../plan/schema";
import type { Tool, ToolContext } from "../tools/tool";
import { executeInstruction, firstJsonObject, mapOutputs } from "./execute";

const echo: Tool<{ value: unknown }> = {
  name: "echo",
  description: "answers its input",
  input: z.object({ value: z.unknown() }),
  run: async (input) => ({ value: input.value }),
};

function session(answer: unknown): LlmSession {
  return {
    calls: [],
    checkBudget() {},
    generate: async () => ({ text: String(answer) }),
    json: async () => answer as never,
  };
}

function exec(
  instruction: Instruction,
  variables: Record<string, unknown> = {},
  options: { allowed?: string[]; llm?: LlmSession; plan?: Plan } = {},
) {
  const plan = options.plan ?? [instruction, { seq_no: 99, type: "reasoning", parameters: {} }];
  return executeInstruction({
    plan,
    instruction,
    variables,
    tools: new Map([["echo", echo]]),
    allowed: new Set(options.allowed ?? ["echo"]),
    toolContext: { namespace: { name: "ns" }, goal: "g", responseFormat: {} } as ToolContext,
    llm: options.llm ?? session(null),
  });
}

describe("executeInstruction", () => {
  it("assign sets each variable, keeps JSON types and evaluates arithmetic", async () => {
    const out = await exec(
      { seq_no: 0, type: "assign", parameters: { n: "${a} * 2 + 1", obj: "${o}", s: "n=${a}" } },
      { a: 4, o: { k: [1] } },
    );
    expect(out.outputs).toEqual({ n: 9, obj: { k: [1] }, s: "n=4" });
    // Its inputs are what it read: references resolved, before the arithmetic.
    expect(out.inputs).toEqual({ n: "4 * 2 + 1", obj: { k: [1] }, s: "n=4" });
    expect(out.pcAfter).toBe(99);
    expect(out.completed).toBe(false);
  });

  it("assign fails on a reference to a variable that does not exist", async () => {
    await expect(
      exec({ seq_no: 0, type: "assign", parameters: { x: "${missing}" } }),
    ).rejects.toMatchObject({ kind: "step", code: "unknown_reference" });
  });

  it("ends the branch only when the exact name final_answer is set", async () => {
    const done = await exec({ seq_no: 0, type: "assign", parameters: { final_answer: "x" } });
    expect(done.completed).toBe(true);
    const notDone = await exec({
      seq_no: 0,
      type: "assign",
      parameters: { final_answer_draft: 1 },
    });
    expect(notDone.completed).toBe(false);
  });

  it("calling puts the whole result in one output var", async () => {
    const out = await exec({
      seq_no: 0,
      type: "calling",
      parameters: { tool_name: "echo", tool_params: { value: { a: 1 } }, output_vars: "r" },
    });
    expect(out.outputs).toEqual({ r: { a: 1 } });
  });

  it("calling maps several output vars from an object, or from the first JSON object in text", async () => {
    expect(mapOutputs({ a: 1, b: 2, c: 3 }, ["a", "b"])).toEqual({ a: 1, b: 2 });
    expect(mapOutputs('Sure! {"a": "x", "b": [1]} done', ["a", "b"])).toEqual({ a: "x", b: [1] });
    expect(() => mapOutputs({ a: 1 }, ["a", "b"])).toThrow(/lacks the keys b/);
    expect(() => mapOutputs("no json here", ["a", "b"])).toThrow(/must be an object/);
    expect(firstJsonObject('x {"a": "}"} y')).toEqual({ a: "}" });
  });

  it("calling refuses, at run time, a tool outside the namespace", async () => {
    await expect(
      exec(
        {
          seq_no: 0,
          type: "calling",
          parameters: { tool_name: "echo", tool_params: { value: 1 } },
        },
        {},
        { allowed: [] },
      ),
    ).rejects.toMatchObject({ kind: "forbidden", code: "tool_not_allowed" });
  });

  it("calling refuses input that does not match the tool's schema", async () => {
    await expect(
      exec({ seq_no: 0, type: "calling", parameters: { tool_name: "echo", tool_params: {} } }),
    ).rejects.toMatchObject({ kind: "step", code: "bad_tool_input" });
    await expect(
      exec({
        seq_no: 0,
        type: "calling",
        parameters: { tool_name: "nope", tool_params: {} },
      }),
    ).rejects.toMatchObject({ code: "unknown_tool" });
  });

  it("jmp without a condition goes to its target", async () => {
    const out = await exec({ seq_no: 0, type: "jmp", parameters: { target_seq: 7 } });
    expect(out.pcAfter).toBe(7);
  });

  it("jmp with a condition asks the LLM and keeps its explanation", async () => {
    const instruction: Instruction = {
      seq_no: 0,
      type: "jmp",
      parameters: { condition_prompt: "Is ${x} big?", jump_if_true: 5, jump_if_false: 6 },
    };
    const yes = await exec(
      instruction,
      { x: 10 },
      { llm: session({ result: true, explanation: "big" }) },
    );
    expect(yes.pcAfter).toBe(5);
    expect(yes.details).toEqual({ condition: true, explanation: "big" });
    expect(yes.inputs).toEqual({ condition_prompt: "Is 10 big?" });
    const no = await exec(
      instruction,
      { x: 1 },
      { llm: session({ result: false, explanation: "small" }) },
    );
    expect(no.pcAfter).toBe(6);
  });

  it("reasoning records nothing and falls through in array order", async () => {
    const plan: Plan = [
      { seq_no: 10, type: "reasoning", parameters: { chain_of_thoughts: "why" } },
      { seq_no: 3, type: "assign", parameters: { final_answer: 1 } },
    ];
    const out = await exec(plan[0]!, {}, { plan });
    expect(out).toMatchObject({ outputs: {}, pcAfter: 3 });
  });

  it("reports the end of the plan as no next seq_no", async () => {
    const plan: Plan = [{ seq_no: 0, type: "assign", parameters: { x: 1 } }];
    const out = await exec(plan[0]!, {}, { plan });
    expect(out.pcAfter).toBeNull();
  });
});
