/**
 * The inputs a saved plan reads: the variables its instructions refer to
 * (`${name}` in an assign's values, a calling's `tool_params`, a jmp's or a
 * wait's parameters) that no instruction of it sets. A task that runs the plan
 * gives them as its `inputs`; the MCP face lists them as a template tool's
 * arguments. It reads the plan leniently, as validation does, since a stored
 * plan is any JSON.
 */
import { definedNames } from "./defined-names";
import { FINAL_ANSWER } from "./plan-values";
import { findReferences } from "./references";
import type { FlowInstruction } from "./schema";
import { VariableName } from "./variable-name";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where an instruction's references are resolved when it runs. */
function referencedValue(ins: FlowInstruction): unknown {
  const p = ins.parameters;
  if (!isObject(p)) return null;
  if (ins.type === "calling") return p.tool_params;
  if (ins.type === "assign" || ins.type === "jmp" || ins.type === "wait") return p;
  return null;
}

/**
 * The names of the plan's inputs, in the order the plan first reads them.
 *
 * @example
 * planInputs([{ seq_no: 0, type: "calling", parameters: { tool_name: "llm_generate",
 *   tool_params: { prompt: "Weather in ${city}" }, output_vars: ["final_answer"] } }])
 * // ["city"]
 */
export function planInputs(plan: readonly unknown[]): string[] {
  const instructions: FlowInstruction[] = plan.map((raw, index) => {
    const ins = isObject(raw) ? raw : {};
    return {
      index,
      seqNo: typeof ins.seq_no === "number" ? ins.seq_no : null,
      type: typeof ins.type === "string" ? ins.type : null,
      parameters: ins.parameters,
    };
  });
  const set = new Set(instructions.flatMap(definedNames));
  const inputs = new Set<string>();
  for (const ins of instructions) {
    for (const ref of findReferences(referencedValue(ins))) {
      if (set.has(ref.name) || ref.name === FINAL_ANSWER) continue;
      if (VariableName.safeParse(ref.name).success) inputs.add(ref.name);
    }
  }
  return [...inputs];
}
