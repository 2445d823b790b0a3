import { describe, expect, it } from "vitest";
import { isStrictJsonSchema } from "../llm/strict-schema";
import { validatePlan } from "../plan/validate";
import { describeTool } from "../tools/describe";
import { builtinTools } from "../tools/registry";
import { planWireSchema } from "./plan-schema";
import { paramsText } from "./tool-params";

const tools = [...builtinTools().values()].map(describeTool);

/** Every keyword used in a schema, property names (which are data) left out. */
function keywords(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) keywords(item, found);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      found.add(key);
      if (key === "properties")
        for (const sub of Object.values(value as object)) keywords(sub, found);
      else keywords(value, found);
    }
  }
  return found;
}

describe("planWireSchema", () => {
  it("has one calling variant per tool, each with the tool's required params", () => {
    const schema = planWireSchema(tools, false) as any;
    const callings = schema.properties.plan.items.anyOf.filter(
      (v: any) => v.properties.type.enum[0] === "calling",
    );
    expect(callings.map((c: any) => c.properties.parameters.properties.tool_name.enum[0])).toEqual(
      tools.map((t) => t.name),
    );
    const generate = callings[0].properties.parameters.properties.tool_params;
    expect(generate.required).toEqual(["prompt"]);
    expect(generate.additionalProperties).toBe(false);
  });

  it("is not strict (free values) and uses no keyword a grammar cannot follow", () => {
    const schema = planWireSchema(tools, true);
    expect(isStrictJsonSchema(schema)).toBe(false);
    const used = keywords(schema);
    for (const keyword of [
      "maxLength",
      "minLength",
      "format",
      "propertyNames",
      "oneOf",
      "default",
      "description",
    ]) {
      expect(used).not.toContain(keyword);
    }
  });

  it("admits a plan that the validator accepts", () => {
    const plan = [
      { seq_no: 0, type: "reasoning", parameters: { chain_of_thoughts: "why" } },
      { seq_no: 1, type: "assign", parameters: { n: 3 } },
      {
        seq_no: 2,
        type: "calling",
        parameters: {
          tool_name: "run_code",
          tool_params: { language: "python", code: "n*2", inputs: "${n}" },
          output_vars: ["x"],
        },
      },
      {
        seq_no: 3,
        type: "jmp",
        parameters: { condition_prompt: "big?", jump_if_true: 4, jump_if_false: 4 },
      },
      { seq_no: 4, type: "assign", parameters: { final_answer: "${x}" } },
    ];
    expect(
      validatePlan(plan, {
        tools: builtinTools(),
        allowedTools: new Set(["run_code"]),
        inputs: new Set(),
      }).ok,
    ).toBe(true);
    // Each instruction matches one variant by type, with only the variant's keys.
    const variants = (planWireSchema(tools, false) as any).properties.plan.items.anyOf;
    for (const instruction of plan) {
      const matching = variants.filter(
        (v: any) =>
          v.properties.type.enum[0] === instruction.type &&
          Object.keys(v.properties.parameters.properties ?? {}).length >= 0 &&
          (v.properties.parameters.required ?? []).every(
            (k: string) => k in instruction.parameters,
          ) &&
          (instruction.type !== "calling" ||
            v.properties.parameters.properties.tool_name.enum[0] ===
              (instruction.parameters as { tool_name: string }).tool_name),
      );
      expect(matching.length, instruction.type).toBeGreaterThan(0);
    }
  });
});

describe("paramsText", () => {
  it("shows a tool's input in a line per parameter, without the JSON Schema's bookkeeping", () => {
    const runCode = tools.find((t) => t.name === "run_code")!;
    const text = paramsText(runCode.input_schema);
    expect(text).toContain('  language: "javascript"|"python".');
    expect(text).toContain("  files?: array of {path, encoding, content} or {$file, path?");
    expect(text).not.toMatch(/additionalProperties|propertyNames|maxLength/);
  });
});
