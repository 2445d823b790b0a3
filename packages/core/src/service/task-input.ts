/**
 * The body that starts a task (`POST /v1/tasks`), also built by triggers and
 * schedules for the tasks they start: its own module, so that they need not
 * import the start protocol to describe a start.
 */
import * as z from "zod";
import { PlanCompat } from "../plan/compat-mode";
import { PlanningMode } from "../plan/planning-mode";
import { VariableName } from "../plan/variable-name";
import { Budget } from "../record-fields";
import { DisplayName } from "./display-text";

export const CreateTaskInput = z
  .object({
    goal: z.string().min(1).max(10_000).optional(),
    plan: z.array(z.unknown()).optional(),
    name: DisplayName(200)
      .optional()
      .describe(
        "A short name for the task, its title in lists; without one, a task started from a plan is titled by the plan's first llm_generate prompt. Plain text: a control character (ESC, a new line) or an unpaired surrogate is refused",
      ),
    inputs: z.record(VariableName, z.unknown()).default({}),
    // null is absent, as StackVM's own API example sends it.
    response_format: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe('How to answer, e.g. {"lang": "Japanese"}; null is the same as absent'),
    namespace: z.string().min(1).max(64).default("default"),
    /** Overrides the namespace's `plan_compat` for this task (plan-language.md). */
    plan_compat: PlanCompat.optional().describe(
      "stackvm: run the plan in StackVM compatibility mode (docs/plan-language.md); absent: the namespace's plan_compat",
    ),
    /** Overrides the namespace's `planning` for this task. */
    planning: PlanningMode.optional().describe(
      "adaptive: the planner writes the next instruction or few after each result, until final_answer; absent: the namespace's planning",
    ),
    budget: Budget.default({ max_steps: 200 }),
    webhook_url: z.string().url().max(2048).optional(),
    evaluate: z.boolean().default(false),
    /** Exempts the task from retention (docs/observability.md#retention). */
    keep: z
      .boolean()
      .optional()
      .describe(
        "true: the task is never deleted by retention (PUT/DELETE /v1/tasks/{id}/keep changes it)",
      ),
    replan: z
      .boolean()
      .optional()
      .describe(
        "false: a step that fails ends the task with its own error, with no plan update (no LLM call); true: the planner may repair it, even in a namespace with replan: false; absent: the namespace's replan (default true)",
      ),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .strict()
  .refine((t) => t.goal !== undefined || t.plan !== undefined, {
    message: "give a goal, a plan, or both",
    path: ["goal"],
  });
export type CreateTaskInput = z.infer<typeof CreateTaskInput>;
