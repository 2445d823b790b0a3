/**
 * Runs one instruction of a plan against the variables at the branch head. Pure
 * with respect to storage: it returns what changed, and the step protocol
 * (`step.ts`) commits it. A recoverable failure is a thrown `StepError`; a
 * transient one (LLM 429) a `RetryableError`.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";
import { ForbiddenError, StepError } from "../errors";
import type { LlmSession } from "../llm/types";
import { evaluateArithmetic } from "../plan/arithmetic";
import { FINAL_ANSWER } from "../plan/plan-values";
import { type Lookup, resolveReferences } from "../plan/references";
import type { Instruction, Plan } from "../plan/schema";
import type { Tool, ToolContext } from "../tools/tool";
import { goalText } from "./goal-text";
import { toolSpan } from "./tool-span";
import { runWait } from "./wait";

export interface ExecuteInput {
  plan: Plan;
  /** The instruction at the branch's PC (`findInstruction`). */
  instruction: Instruction;
  /** Variables, with every value the instruction references loaded whole. */
  variables: Record<string, unknown>;
  tools: ReadonlyMap<string, Tool>;
  allowed: ReadonlySet<string>;
  toolContext: ToolContext;
  llm: LlmSession;
}

export interface Execution {
  instruction: Instruction;
  inputs: unknown;
  outputs: Record<string, unknown>;
  /** The next seq_no, or null when execution runs past the end of the plan. */
  pcAfter: number | null;
  /** True when the instruction set `final_answer`. */
  completed: boolean;
  details?: Record<string, unknown>;
}

/** The model's verdict on a `jmp` condition, built by the first condition asked. */
export const JmpCondition = buildOnce(() =>
  z.object({
    result: z.boolean(),
    explanation: z.string(),
  }),
);
export type JmpCondition = z.infer<ReturnType<typeof JmpCondition>>;

/** The seq_no after `seqNo` in array order, or null at the end. */
export function nextSeqNo(plan: Plan, seqNo: number): number | null {
  const index = plan.findIndex((i) => i.seq_no === seqNo);
  return plan[index + 1]?.seq_no ?? null;
}

export function findInstruction(plan: Plan, seqNo: number): Instruction {
  const instruction = plan.find((i) => i.seq_no === seqNo);
  if (!instruction) {
    throw new StepError("bad_pc", `the plan has no instruction with seq_no ${seqNo}`);
  }
  return instruction;
}

export async function executeInstruction(input: ExecuteInput): Promise<Execution> {
  const { instruction } = input;
  const lookup: Lookup = (name) =>
    Object.hasOwn(input.variables, name)
      ? { found: true, value: input.variables[name] }
      : { found: false };
  const fallThrough = nextSeqNo(input.plan, instruction.seq_no);
  // StackVM compatibility mode (the namespace's or the task's): as the original VM, only
  // top-level strings are resolved (`levels`), and a reference that does not resolve stays text.
  const stackvm = input.toolContext.namespace.plan_compat === "stackvm";
  const resolve = (value: unknown, levels = 0) =>
    resolveReferences(value, lookup, stackvm ? { levels } : undefined);

  switch (instruction.type) {
    case "assign": {
      // Inputs: what the assign read (references resolved, before the arithmetic),
      // so a commit shows "6 * 7" beside the 42 it set.
      const inputs: Record<string, unknown> = {};
      const outputs: Record<string, unknown> = {};
      for (const [name, raw] of Object.entries(instruction.parameters)) {
        const value = resolve(raw);
        inputs[name] = value;
        outputs[name] = typeof value === "string" ? (evaluateArithmetic(value) ?? value) : value;
      }
      return {
        instruction,
        inputs,
        outputs,
        pcAfter: fallThrough,
        completed: Object.hasOwn(outputs, FINAL_ANSWER),
      };
    }
    case "reasoning":
      return { instruction, inputs: null, outputs: {}, pcAfter: fallThrough, completed: false };
    case "wait": {
      const { inputs } = runWait(instruction, lookup, input.toolContext);
      return { instruction, inputs, outputs: {}, pcAfter: fallThrough, completed: false };
    }
    case "jmp": {
      const p = instruction.parameters;
      if ("target_seq" in p) {
        return { instruction, inputs: p, outputs: {}, pcAfter: p.target_seq, completed: false };
      }
      const prompt = resolve(p.condition_prompt) as string;
      const context = p.context === undefined ? undefined : resolve(p.context);
      const verdict = await input.llm.json({
        purpose: "jmp_condition",
        role: "reason",
        schemaName: "jmp_condition",
        schema: JmpCondition(),
        messages: [
          {
            role: "system",
            content:
              "You decide one condition of a running program. Answer JSON " +
              '{"result": true|false, "explanation": "one or two sentences"}.\n' +
              goalText(input.toolContext.goal, input.toolContext.responseFormat),
          },
          {
            role: "user",
            content:
              context === undefined
                ? `Condition: ${prompt}`
                : `Condition: ${prompt}\n\nContext:\n${typeof context === "string" ? context : JSON.stringify(context)}`,
          },
        ],
      });
      return {
        instruction,
        inputs: { condition_prompt: prompt, ...(context === undefined ? {} : { context }) },
        outputs: {},
        pcAfter: verdict.result ? p.jump_if_true : p.jump_if_false,
        completed: false,
        details: { condition: verdict.result, explanation: verdict.explanation },
      };
    }
    case "calling": {
      const { tool_name: toolName, tool_params: rawParams, output_vars } = instruction.parameters;
      const tool = input.tools.get(toolName);
      if (!tool) {
        throw new StepError("unknown_tool", `the tool '${toolName}' does not exist`);
      }
      if (!input.allowed.has(toolName)) {
        throw new ForbiddenError(
          `the namespace '${input.toolContext.namespace.name}' does not allow the tool '${toolName}'`,
          "tool_not_allowed",
        );
      }
      const params = resolve(rawParams, 1);
      // What checking the input needs, loaded on first use (ask_human's JSON Schemas).
      await tool.prepare?.();
      const parsed = tool.input.safeParse(params);
      if (!parsed.success) {
        throw new StepError(
          "bad_tool_input",
          `the input of '${toolName}' does not match its schema: ${z.prettifyError(parsed.error)}`,
          parsed.error.issues,
        );
      }
      // The call is told its output vars' names: with several, llm_generate answers exactly
      // those keys; writing final_answer alone, it asks for the task's answer schema.
      const names = outputNames(output_vars);
      const context =
        names.length > 0 ? { ...input.toolContext, outputVars: names } : input.toolContext;
      const run = () => tool.run(parsed.data, context);
      const result = context.tracer
        ? await context.tracer.span(`execute_tool ${toolName}`, toolSpan(toolName, context), run)
        : await run();
      const outputs = mapOutputs(result.value, output_vars);
      return {
        instruction,
        inputs: params,
        outputs,
        pcAfter: fallThrough,
        completed: Object.hasOwn(outputs, FINAL_ANSWER),
        ...(result.details ? { details: result.details } : {}),
      };
    }
  }
}

/**
 * One output var receives the whole result. Several: the result must be an object
 * holding each name (a string result is parsed as the first JSON object in it).
 */
/** The names of a calling's `output_vars` (one name as a string, or a list). */
export function outputNames(outputVars: string | string[] | undefined): string[] {
  return outputVars === undefined ? [] : typeof outputVars === "string" ? [outputVars] : outputVars;
}

export function mapOutputs(
  value: unknown,
  outputVars: string | string[] | undefined,
): Record<string, unknown> {
  const names =
    outputVars === undefined ? [] : typeof outputVars === "string" ? [outputVars] : outputVars;
  if (names.length === 0) return {};
  if (names.length === 1) return { [names[0]!]: value };
  const object = typeof value === "string" ? firstJsonObject(value) : value;
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    throw new StepError(
      "output_not_object",
      `the tool's result must be an object with the keys ${names.join(", ")} to fill several output_vars`,
    );
  }
  const missing = names.filter((n) => !Object.hasOwn(object, n));
  if (missing.length > 0) {
    throw new StepError(
      "output_missing_keys",
      `the tool's result lacks the keys ${missing.join(", ")} named in output_vars (it has: ${Object.keys(object).join(", ") || "none"})`,
    );
  }
  return Object.fromEntries(names.map((n) => [n, (object as Record<string, unknown>)[n]]));
}

/** The first JSON object in a text, or undefined. */
export function firstJsonObject(text: string): unknown {
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (inString) {
        if (ch === "\\") i++;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) {
        try {
          return JSON.parse(text.slice(start, i + 1));
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}
