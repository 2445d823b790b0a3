/**
 * What an instruction sets, read leniently: its own module, with no schema
 * built, so that reading a saved plan's inputs (`plan-inputs.ts`, on the API's
 * MCP face) does not build the plan language at the API's start.
 */
import type { FlowInstruction } from "./schema";

/** Variables an instruction sets: an assign's keys, a calling's output_vars. */
export function definedNames(ins: FlowInstruction): string[] {
  const p = ins.parameters;
  if (typeof p !== "object" || p === null || Array.isArray(p)) return [];
  const params = p as Record<string, unknown>;
  if (ins.type === "assign") return Object.keys(params);
  if (ins.type === "calling") {
    const out = params.output_vars;
    if (typeof out === "string") return [out];
    if (Array.isArray(out)) return out.filter((name): name is string => typeof name === "string");
  }
  return [];
}
