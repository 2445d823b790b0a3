/**
 * The planner's prompts. The plan language is described to the model in its own
 * words (a condensed form of `shared/spec/plan-language.md`), with the tools it may
 * call, today's date and, when there is one, a saved plan for a similar goal.
 */

import type { ResponseFormat } from "../model";
import type { Plan } from "../plan/schema";
import type { LlmMessage } from "../ports/llm";
import type { ThreadHistory } from "../store/records";
import type { ToolDescription } from "../tools/registry";
import { goalText } from "../vm/goal-text";
import { threadText } from "./thread-prompt";
import { paramsText } from "./tool-params";

export const PLAN_LANGUAGE = `A plan is a JSON array of instructions. Each has "seq_no" (a unique non-negative integer), "type" and "parameters".
Execution starts at the first instruction and continues in array order; a jump names the seq_no of its target.
Types:
- "assign": parameters is an object {name: value}; sets each variable. A string value that is only arithmetic over numbers (after references are resolved) becomes a number. Keys of one assign must not reference each other.
- "calling": {"tool_name": "...", "tool_params": {...}, "output_vars": ["name"]}. One output var receives the whole result; with several, the result must be an object with those keys.
- "jmp": conditional {"condition_prompt": "...", "context": optional, "jump_if_true": seq_no, "jump_if_false": seq_no} (an LLM decides the condition), or unconditional {"target_seq": seq_no}.
- "reasoning": {"chain_of_thoughts": "...", "dependency_analysis": "..."}: does nothing; put it first to explain the plan.
References: "\${name}" as a whole string is replaced by the variable's value with its JSON type; inside a longer string it becomes text; "\${name.key}" and "\${name.0}" follow paths. Every referenced variable must be assigned before it is used on every path, or be a task input. "\\\${" is a literal "\${".
The plan ends when an instruction sets the variable named exactly "final_answer": the last step must assign it, and it must be what the user asked for, in the language asked for.
Use only the tools listed. Keep plans short: prefer one llm_generate with a precise prompt over many small steps.`;

export interface PlanPromptInput {
  goal: string;
  responseFormat: ResponseFormat;
  tools: ToolDescription[];
  inputs: Record<string, unknown>;
  today: string;
  example?: { goal: string; plan: Plan } | undefined;
  /** A turn of a thread: the turns before it (`thread-prompt.ts`). */
  thread?: ThreadHistory | undefined;
  /** The namespace's `planner_instructions`, if it has any. */
  instructions?: string | undefined;
  /** `planning: "adaptive"`: write the next instruction or few, see their results, then more. */
  adaptive?: boolean | undefined;
}

/**
 * What an adaptive task's planner is asked for: the next instruction or few,
 * not the whole plan, since it sees their results before it writes more.
 */
export function adaptiveText(adaptive: boolean | undefined, update: boolean): string {
  if (!adaptive) return "";
  return update
    ? `\nThis task is planned adaptively and its plan ran out: look at the variables the steps so far produced, keep every instruction of the current plan unchanged, and append the next instruction or few (new, higher seq_no values), with resume_at the first of them. Set final_answer as soon as the results give it.\n`
    : `\nThis task is planned adaptively: write only the first instruction or few, the ones whose results you need before you can choose what comes next. When they have run you will see their results and write more. Set final_answer only once you can.\n`;
}

/**
 * The namespace's planner instructions as a section of the system prompt: the
 * operator's guidance, below the language and tools it must not override.
 */
export function instructionsText(instructions: string | undefined): string {
  const text = instructions?.trim();
  if (!text) return "";
  return `\nInstructions for this namespace's plans (follow them where they do not contradict the rules above):\n${text}\n`;
}

function toolsText(tools: ToolDescription[]): string {
  return tools
    .map(
      (t) =>
        `- ${t.name}: ${withoutInputSentence(t.description)}\n  tool_params:\n${paramsText(t.input_schema, "    ")}`,
    )
    .join("\n");
}

/** A description's "Input: a (required), b (optional)." says what the parameter lines below it say. */
function withoutInputSentence(description: string): string {
  return description.replace(/\s*\bInput: [^.]*\.(?=\s|$)/, "");
}

function inputsText(inputs: Record<string, unknown>): string {
  const names = Object.keys(inputs);
  if (names.length === 0) return "The task has no input variables.";
  return `Input variables that exist before the plan runs: ${names
    .map((n) => `${n} (${preview(inputs[n])})`)
    .join(", ")}`;
}

/** A short preview of a value for a prompt. */
export function preview(value: unknown, max = 300): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

export function planMessages(input: PlanPromptInput): LlmMessage[] {
  const example = input.example
    ? `\nA plan that worked for a similar goal ("${input.example.goal}"):\n${JSON.stringify(input.example.plan)}\n`
    : "";
  return [
    {
      role: "system",
      content: `You write plans for a virtual machine that runs them step by step. Today is ${input.today}.

${PLAN_LANGUAGE}

Available tools:
${toolsText(input.tools)}
${example}${instructionsText(input.instructions)}${adaptiveText(input.adaptive, false)}
Think about the goal, break it into steps, then answer JSON {"reasoning": "how the plan reaches the goal", "plan": [instructions]}.`,
    },
    {
      role: "user",
      content: `${threadText(input.thread)}${goalText(input.goal, input.responseFormat)}\n${inputsText(input.inputs)}`,
    },
  ];
}

export interface ReplanPromptInput extends PlanPromptInput {
  plan: Plan;
  pc: number | null;
  variables: Record<string, unknown>;
  suggestion: string;
  error?: { code: string; message: string; seq_no: number | null } | undefined;
}

export function replanMessages(input: ReplanPromptInput): LlmMessage[] {
  const vars = Object.entries(input.variables)
    .map(([n, v]) => `- ${n} = ${preview(v, 500)}`)
    .join("\n");
  const why = input.error
    ? `The instruction at seq_no ${input.error.seq_no ?? "?"} failed: [${input.error.code}] ${input.error.message}`
    : `The user asks for a change: ${input.suggestion}`;
  return [
    {
      role: "system",
      content: `You update plans for a virtual machine that runs them step by step. Today is ${input.today}.

${PLAN_LANGUAGE}

Available tools:
${toolsText(input.tools)}
${instructionsText(input.instructions)}${adaptiveText(input.adaptive, true)}
Rewrite the plan from the program counter on. Keep the instructions before the program counter exactly as they are (they ran already), do not reference variables that do not exist, and do not return the same plan unchanged. Answer JSON {"reasoning": "...", "plan": [the whole new plan], "resume_at": seq_no where execution continues}.`,
    },
    {
      role: "user",
      content: `${threadText(input.thread)}${goalText(input.goal, input.responseFormat)}

Current plan:
${JSON.stringify(input.plan)}

Program counter: ${input.pc ?? "none (the plan had ended)"}
Variables that exist now:
${vars || "(none)"}

${why}${input.error ? `\nSuggestion: ${input.suggestion}` : ""}`,
    },
  ];
}
