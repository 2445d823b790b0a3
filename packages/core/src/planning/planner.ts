/**
 * The planner: the reasoning model writes a plan for a goal (schema `plan`), or
 * rewrites the rest of one from the PC (schema `plan_update`). Every plan is
 * validated before it runs; problems go back to the model, a bounded number of
 * times, and a goal that cannot be planned fails with the last problems.
 */
import * as z from "zod";
import { StepError } from "../errors";
import { repairExcerpt } from "../llm/excerpt";
import type { PlanProblem } from "../plan/problems";
import type { Plan } from "../plan/schema";
import { validatePlan } from "../plan/validate";
import type { Clock } from "../ports/clock";
import { describeTool } from "../tools/describe";
import type { Tool } from "../tools/tool";
import type { PlanInput, Planner, PlanResult, ReplanInput } from "../vm/planner-port";
import { planWireSchema } from "./plan-schema";
import { planMessages, replanMessages } from "./prompts";

export const PlanAnswer = z.object({
  reasoning: z.string(),
  plan: z.array(z.record(z.string(), z.unknown())),
});
export const PlanUpdateAnswer = PlanAnswer.extend({ resume_at: z.number().int().min(0) });

/** A saved plan that may serve a goal. */
export interface TemplateMatch {
  template_id: string;
  goal: string;
  plan: Plan;
  /** The goal's normalized text equals the template's: reuse it with no LLM call. */
  exact: boolean;
}

export interface PlannerDeps {
  clock: Clock;
  /** Validation rounds after the first answer. */
  repairRounds: number;
  findTemplate?: (tenant: string, namespace: string, goal: string) => Promise<TemplateMatch | null>;
}

function toolsFor(tools: ReadonlyMap<string, Tool>, allowed: ReadonlySet<string>) {
  return [...tools.values()].filter((t) => allowed.has(t.name)).map(describeTool);
}

/** How many of a plan's problems go back to the model (and into the error's message). */
const MAX_PROBLEMS = 20;

/** What the planner's repair asks for when a plan is cut off at the output limit. */
export const SHORTER_PLAN =
  "write a shorter plan (fewer instructions, shorter prompts and reasoning)";

function problemsText(problems: PlanProblem[]): string {
  const more = problems.length - MAX_PROBLEMS;
  return problems
    .slice(0, MAX_PROBLEMS)
    .map(
      (p) =>
        `- ${p.path || "(plan)"}${p.seq_no === null ? "" : ` (seq_no ${p.seq_no})`}: ${p.message} Hint: ${p.hint}`,
    )
    .concat(more > 0 ? [`- and ${more} more`] : [])
    .join("\n");
}

/** A rejected plan longer than this (as JSON) is kept in its call's trace only. */
const KEPT_PLAN_CHARS = 8_000;

function keptPlan(plan: unknown): { plan: unknown } | { plan_chars: number } {
  const chars = JSON.stringify(plan ?? null).length;
  return chars <= KEPT_PLAN_CHARS ? { plan } : { plan_chars: chars };
}

/** How much of a reasoning model's thinking the plan's reasoning keeps. */
const KEPT_THINKING_CHARS = 4_000;

/**
 * The plan's reasoning: the answer's own, with the model's thinking (`<think>` or
 * the server's reasoning field) before it, so that neither is lost.
 */
function planReasoning(reasoning: string, thinking: string | undefined): string {
  if (thinking === undefined || thinking.trim() === "") return reasoning;
  const kept =
    thinking.length > KEPT_THINKING_CHARS ? `${thinking.slice(0, KEPT_THINKING_CHARS)}…` : thinking;
  return reasoning.trim() === "" ? kept : `${kept}\n\n${reasoning}`;
}

/** The namespace's planner instructions as the plan commit shows them: what the planner was told. */
function instructionsDetails(instructions: string | undefined): { planner_instructions?: string } {
  const text = instructions?.trim();
  return text ? { planner_instructions: text } : {};
}

export function createPlanner(deps: PlannerDeps): Planner {
  const today = () => new Date(deps.clock.now()).toISOString().slice(0, 10);

  async function untilValid<A extends { plan: unknown }>(
    input: PlanInput,
    inputs: Iterable<string>,
    ask: (extra: Array<{ role: "assistant" | "user"; content: string }>) => Promise<A>,
  ): Promise<{ answer: A; plan: Plan; attempts: number; repaired: PlanProblem[][] }> {
    const extra: Array<{ role: "assistant" | "user"; content: string }> = [];
    const repaired: PlanProblem[][] = [];
    // Each rejected plan with its problems and which of the commit's LLM calls wrote
    // it (that call's trace holds the whole answer); a large plan only in the trace.
    const rejected: Array<Record<string, unknown>> = [];
    const context = {
      tools: input.tools,
      allowedTools: input.allowed,
      inputs: new Set(inputs),
      // An adaptive plan so far need not reach final_answer: the planner writes more.
      partial: input.branch.config.namespace.planning === "adaptive",
    };
    for (let attempt = 1; ; attempt++) {
      const answer = await ask(extra);
      const result = validatePlan(answer.plan, context);
      if (result.ok) return { answer, plan: result.plan, attempts: attempt, repaired };
      repaired.push(result.problems);
      rejected.push({
        attempt,
        llm_call: input.llm.calls.length - 1,
        problems: result.problems,
        ...keptPlan(answer.plan),
      });
      if (attempt > deps.repairRounds) {
        throw new StepError(
          "plan_invalid",
          `the planner's plan still fails validation after ${attempt} attempts:\n${problemsText(result.problems)}`,
          { problems: result.problems, attempts: rejected },
        );
      }
      extra.push(
        // The problems and the start of the plan: the whole would grow every round.
        { role: "assistant", content: repairExcerpt(JSON.stringify(answer)) },
        {
          role: "user",
          content: `That plan fails validation:\n${problemsText(result.problems)}\nAnswer the whole corrected JSON again.`,
        },
      );
    }
  }

  return {
    async plan(input: PlanInput): Promise<PlanResult> {
      const { config } = input.branch;
      const goal = config.goal ?? "";
      const template = deps.findTemplate
        ? await deps.findTemplate(input.branch.tenant_id, config.namespace.name, goal)
        : null;
      if (template?.exact) {
        const check = validatePlan(template.plan, {
          tools: input.tools,
          allowedTools: input.allowed,
          inputs: new Set(Object.keys(config.inputs)),
        });
        if (check.ok) {
          return {
            plan: check.plan,
            reasoning: `reused the saved plan ${template.template_id} for the same goal`,
            details: { template_id: template.template_id, llm_calls_saved: true },
          };
        }
      }
      const tools = toolsFor(input.tools, input.allowed);
      const base = planMessages({
        goal,
        responseFormat: config.response_format,
        tools,
        inputs: config.inputs,
        today: today(),
        example: template ? { goal: template.goal, plan: template.plan } : undefined,
        thread: config.thread,
        instructions: config.namespace.planner_instructions,
        adaptive: config.namespace.planning === "adaptive",
      });
      let thinking: string | undefined;
      const { answer, plan, attempts, repaired } = await untilValid(
        input,
        Object.keys(config.inputs),
        (extra) =>
          input.llm.json({
            purpose: "plan",
            role: "reason",
            schemaName: "plan",
            schema: PlanAnswer,
            wireSchema: planWireSchema(tools, false),
            onReasoning: (text) => {
              thinking = text;
            },
            messages: [...base, ...extra],
            cutOffHint: SHORTER_PLAN,
            // A watcher sees the plan being written, labelled by its purpose.
            stream: true,
          }),
      );
      return {
        plan,
        reasoning: planReasoning(answer.reasoning, thinking),
        details: {
          attempts,
          ...(repaired.length ? { repaired_problems: repaired } : {}),
          ...(template ? { example_template: template.template_id } : {}),
          ...instructionsDetails(config.namespace.planner_instructions),
        },
      };
    },

    async replan(input: ReplanInput): Promise<PlanResult & { pc: number }> {
      const { config } = input.branch;
      const tools = toolsFor(input.tools, input.allowed);
      const base = replanMessages({
        goal: config.goal ?? "",
        responseFormat: config.response_format,
        tools,
        inputs: config.inputs,
        today: today(),
        plan: input.plan,
        pc: input.pc,
        variables: input.variables,
        suggestion: input.suggestion,
        error: input.error,
        thread: config.thread,
        instructions: config.namespace.planner_instructions,
        adaptive: config.namespace.planning === "adaptive",
      });
      let thinking: string | undefined;
      const { answer, plan, attempts } = await untilValid(
        input,
        [...Object.keys(input.variables), ...Object.keys(config.inputs)],
        (extra) =>
          input.llm.json({
            purpose: "plan_update",
            role: "reason",
            schemaName: "plan_update",
            schema: PlanUpdateAnswer,
            wireSchema: planWireSchema(tools, true),
            onReasoning: (text) => {
              thinking = text;
            },
            messages: [...base, ...extra],
            cutOffHint: SHORTER_PLAN,
            // A watcher sees the plan being written, labelled by its purpose.
            stream: true,
          }),
      );
      const pc = plan.some((i) => i.seq_no === answer.resume_at)
        ? answer.resume_at
        : (plan.find((i) => input.pc === null || i.seq_no >= input.pc)?.seq_no ?? plan[0]!.seq_no);
      return {
        plan,
        reasoning: planReasoning(answer.reasoning, thinking),
        pc,
        details: { attempts, ...instructionsDetails(config.namespace.planner_instructions) },
      };
    },
  };
}
