// biome-ignore-all lint/suspicious/noTemplateCurlyInString: messages show plans' ${name} references
/**
 * Warnings about how a reference will resolve at run time, beside check 4 of
 * validation (`control-flow.ts`), which asks only whether its variable is set:
 *
 * - a dotted reference (`${x.key}`) into a variable that only a plain-text
 *   `llm_generate` sets (one output var, no `response_format`): the value is
 *   text, which has no keys. Strict mode fails that step; StackVM compatibility
 *   mode leaves the reference as text, as the original did;
 * - in compatibility mode, a reference nested deeper than the original VM
 *   resolved (it resolved only the top-level values of `assign` and of
 *   `tool_params`): it stays as written.
 *
 * Warnings, not problems: the plans are valid, and StackVM's production plans
 * carry both forms (plan-language.md, "StackVM compatibility mode").
 */
import type { PlanCompat } from "./compat-mode";
import { label, type ProblemList } from "./problems";
import type { Reference } from "./references";
import type { FlowInstruction } from "./schema";

/** Variables that only a plain-text `llm_generate` sets: their values are always text. */
export function textOnlyVariables(plan: readonly FlowInstruction[]): Set<string> {
  const text = new Set<string>();
  const other = new Set<string>();
  for (const ins of plan) {
    const p = isObject(ins.parameters) ? ins.parameters : {};
    if (ins.type === "assign") for (const name of Object.keys(p)) other.add(name);
    if (ins.type !== "calling") continue;
    const out = typeof p.output_vars === "string" ? [p.output_vars] : p.output_vars;
    if (!Array.isArray(out)) continue;
    const params = isObject(p.tool_params) ? p.tool_params : {};
    const plain =
      p.tool_name === "llm_generate" && out.length === 1 && params.response_format === undefined;
    for (const name of out) if (typeof name === "string") (plain ? text : other).add(name);
  }
  for (const name of other) text.delete(name);
  return text;
}

/**
 * Adds the warnings above for one reference of a reachable instruction. Returns
 * false when the reference is not resolved at all (nested, compatibility mode),
 * so whether its variable is set does not matter.
 */
export function checkReferenceForm(
  ins: FlowInstruction,
  ref: Reference,
  path: string,
  context: { compat: PlanCompat; textOnly: ReadonlySet<string>; warnings: ProblemList },
): boolean {
  const at = { seq_no: ins.seqNo, path };
  // Where the original stopped: an assign's own values, a calling's tool_params values.
  const topLevel = ins.type === "assign" ? 0 : 1;
  if (context.compat === "stackvm" && ins.type !== "wait" && ref.where.length > topLevel) {
    context.warnings.add({
      ...at,
      code: "nested_reference",
      message: `${ref.text} at ${label(ins)} is nested inside an object or array; in StackVM compatibility mode it stays as written, since StackVM resolved only top-level values.`,
      hint: "Move the reference to a top-level string value, or run the plan in strict mode, which resolves references at any depth.",
    });
    return false;
  }
  if (ref.path.length > 0 && context.textOnly.has(ref.name)) {
    context.warnings.add({
      ...at,
      code: "reference_into_text",
      message:
        context.compat === "stackvm"
          ? `${ref.text} at ${label(ins)} reads a key of "${ref.name}", which llm_generate sets as text; text has no keys, so in StackVM compatibility mode ${ref.text} stays as text.`
          : `${ref.text} at ${label(ins)} reads a key of "${ref.name}", which llm_generate sets as text; text has no keys, so this step fails.`,
      hint: `Give that llm_generate a response_format that asks for a JSON object with the key, or use \${${ref.name}} as a whole.`,
    });
  }
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
