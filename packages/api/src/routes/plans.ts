/**
 * `POST /v1/plans/validate`: checks a plan against a namespace's tools without
 * running it, for integrators and the console's editor alike. Plans written for
 * the original StackVM come back normalized, with a warning for each rewrite.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { findGroups, PlanCompat } from "@stackvm/core";
// Its own entry point: re-exported from `@stackvm/core`, the plan checker would be
// in the worker's cold start, which loads it only when a plan is checked.
import { validatePlan } from "@stackvm/core/plan-check";
import type { ApiApp } from "../env";
import { bearer, commonErrors, json, jsonBody } from "../schemas";
import type { PLANS_ROUTES } from "./plans.paths";

const ValidateRequest = z
  .object({
    plan: z.unknown().openapi({ description: "The plan: a JSON array of instructions" }),
    namespace: z
      .string()
      .regex(/^[a-z0-9_-]{1,64}$/, "a namespace name is 1 to 64 of a-z, 0-9, _ and -")
      .default("default"),
    inputs: z
      .array(z.string().max(128))
      .max(500)
      .default([])
      .openapi({ description: "Names of the task inputs the plan may reference" }),
    plan_compat: PlanCompat.optional().openapi({
      description:
        "`stackvm` checks the plan in StackVM compatibility mode (references nothing sets are warnings); absent: the namespace's `plan_compat`",
    }),
  })
  .strict();

/** A problem or warning of a plan: also in the answer of POST /v1/tasks. */
export const PlanProblemSchema = z.object({
  seq_no: z.number().int().nullable(),
  path: z.string(),
  code: z.string(),
  message: z.string(),
  hint: z.string(),
});

const ValidateAnswer = z
  .object({
    valid: z.boolean(),
    problems: z.array(PlanProblemSchema),
    warnings: z.array(PlanProblemSchema),
    plan: z.array(z.unknown()).nullable(),
    groups: z
      .array(
        z.object({
          members: z.array(z.number().int()),
          name: z.string().nullable(),
        }),
      )
      .openapi({
        description:
          "The plan's parallel groups (1.1): members by seq_no, and the plan's `group` mark or null when found",
      }),
  })
  .openapi("PlanValidation");

export function registerPlanRoutes(app: ApiApp, routes: typeof PLANS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.validatePlan,
      summary: "Check a plan against a namespace without running it",
      description:
        "Answers every problem (the same shape as a 422 of POST /v1/tasks) and warning, and the plan as it would run (StackVM forms normalized). Starts nothing.",
      security: bearer,
      request: jsonBody(ValidateRequest),
      responses: { 200: json(ValidateAnswer, "The verdict"), ...commonErrors },
    }),
    async (c) => {
      const { plan, namespace, inputs, plan_compat } = c.req.valid("json");
      const { tools, config } = await c
        .get("deps")
        .namespaces.resolve(c.get("tenantId"), namespace);
      const result = validatePlan(plan, {
        tools: tools.all,
        allowedTools: tools.allowed,
        inputs: new Set(inputs),
        compat: plan_compat ?? config.plan_compat ?? "strict",
      });
      return c.json(
        result.ok
          ? {
              valid: true,
              problems: [],
              warnings: result.warnings,
              plan: result.plan,
              groups: findGroups(result.plan),
            }
          : {
              valid: false,
              problems: result.problems,
              warnings: result.warnings,
              plan: null,
              groups: [],
            },
        200,
      );
    },
  );
}
