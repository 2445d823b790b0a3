/**
 * What a namespace is as the API takes and shows it: its name, the body of
 * `PUT /v1/namespaces/{name}` and the namespace it answers. Apart from the
 * service (`namespaces.ts`), which a worker's step reads through without
 * building these schemas at its cold start.
 */
import * as z from "zod";
import { KnowledgeBaseName } from "../knowledge/ingest-message";
import { hostPatternProblem } from "../net/host-allow-list";
import { PlanCompat } from "../plan/compat-mode";
import { MAX_GROUP_WIDTH } from "../plan/groups";
import { PlanningMode } from "../plan/planning-mode";
import { SandboxLimitsRequest } from "../sandbox/protocol";
import { NamespaceName } from "./namespace-name";

export { NamespaceName };

/** The most characters of `planner_instructions` (about 1,300 tokens by the session's high estimate). */
export const MAX_PLANNER_INSTRUCTIONS_CHARS = 4_000;

/** Guidance the planner reads for every plan and plan update of the namespace's tasks. */
export const PlannerInstructions = z
  .string()
  .max(
    MAX_PLANNER_INSTRUCTIONS_CHARS,
    `planner_instructions must be at most ${MAX_PLANNER_INSTRUCTIONS_CHARS.toLocaleString("en-US")} characters: shorten them (the planner reads them in every plan prompt)`,
  )
  .describe(
    "Guidance added to the planner's plan and plan-update prompts for this namespace's tasks",
  );

export const NamespaceInput = z
  .object({
    allowed_tools: z.array(z.string().min(1).max(128)).max(200).default([]),
    allowed_hosts: z
      .array(
        z
          .string()
          .max(253)
          .superRefine((host, ctx) => {
            const problem = hostPatternProblem(host);
            if (problem) ctx.addIssue({ code: "custom", message: problem });
          }),
      )
      .max(200)
      .default([]),
    description: z.string().max(2000).default(""),
    /** Added to the planner's plan and plan-update prompts; empty or absent: none. */
    planner_instructions: PlannerInstructions.optional(),
    /** Lower sandbox limits for code run by this namespace's tasks (never above the function's). */
    sandbox_limits: SandboxLimitsRequest.optional(),
    /** The knowledge bases its plans may search; absent: all of the tenant's for `default`, none for others. */
    knowledge_bases: z.array(KnowledgeBaseName).max(100).optional(),
    /** Members of a parallel group run at once, at most this many (1: one at a time; default 4). */
    parallel_width: z.number().int().min(1).max(MAX_GROUP_WIDTH).optional(),
    /** Finished tasks of this namespace are deleted this many days after they end (over the tenant's setting). */
    retention_days: z.number().int().min(1).max(36_500).optional(),
    /** `stackvm`: plans run in StackVM compatibility mode (plan-language.md); default `strict`. */
    plan_compat: PlanCompat.optional().describe(
      "stackvm: StackVM compatibility mode for the namespace's plans (docs/plan-language.md); default strict",
    ),
    /** `adaptive`: the planner writes the next instruction or few after each result; default `up_front`. */
    planning: PlanningMode.optional().describe(
      "adaptive: the planner writes the next instruction or few after each result, until final_answer; default up_front",
    ),
    /** False: a failed step of its tasks is not repaired by a plan update (a task's own `replan` wins). */
    replan: z
      .boolean()
      .optional()
      .describe(
        "false: a step that fails ends its task with its own error, with no plan update (no LLM call), unless the task says replan: true; absent or true: the planner may repair it",
      ),
  })
  .strict();
export type NamespaceInput = z.infer<typeof NamespaceInput>;

export const Namespace = z.object({
  name: z.string(),
  allowed_tools: z.array(z.string()),
  allowed_hosts: z.array(z.string()),
  description: z.string(),
  planner_instructions: z.string().optional(),
  code_tools: z.array(z.string()),
  http_tools: z.array(z.string()),
  mcp_servers: z.array(z.string()),
  sandbox_limits: SandboxLimitsRequest.optional(),
  knowledge_bases: z.array(z.string()).optional(),
  parallel_width: z.number().int().optional(),
  retention_days: z.number().int().optional(),
  plan_compat: PlanCompat,
  planning: PlanningMode.optional(),
  /** Present (false) only when plan repair is off for the namespace's tasks. */
  replan: z.boolean().optional(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});
export type Namespace = z.infer<typeof Namespace>;
