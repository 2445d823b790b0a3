/**
 * `GET /v1/usage`: the tenant's own months, read by its key (the operator's view
 * of any tenant is `/v1/admin/tenants/{tenant}/quotas`). A tenant reads only
 * its own items: the tenant comes from the key, never from the request.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { ApiApp } from "../env";
import { bearer, commonErrors } from "../schemas";
import type { USAGE_ROUTES } from "./usage.paths";

/** Mirrors `MAX_USAGE_MONTHS` in core's `service/usage-report.ts`. */
const MAX_MONTHS = 36;

const Counts = {
  runs: z.number().int().openapi({
    description: "Runs that ended: a task's main branch, a fork, a retry, an evaluation round",
  }),
  steps: z.number().int(),
  llm_calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number(),
};

const NamespaceUsage = z.object({ namespace: z.string(), ...Counts }).openapi("NamespaceUsage");

const UsageMonth = z
  .object({
    month: z.string().openapi({ example: "2026-03" }),
    tokens: z
      .number()
      .openapi({ description: "What the monthly token budget counted (input plus output)" }),
    cost_usd: z
      .number()
      .openapi({ description: "What the monthly cost budget counted, in US dollars" }),
    runs: z
      .object(Counts)
      .openapi({ description: "The runs that ended in the month, over all namespaces" }),
    namespaces: z.array(NamespaceUsage),
  })
  .openapi("UsageMonth");

const UsageReport = z
  .object({ tenant: z.string(), months: z.array(UsageMonth) })
  .openapi("UsageReport");

const UsageQuery = z.object({
  months: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_MONTHS)
    .default(12)
    .openapi({ description: `How many months back, this one included (1 to ${MAX_MONTHS})` }),
});

export function registerUsageRoutes(app: ApiApp, routes: typeof USAGE_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.getUsage,
      summary: "This tenant's usage by month and namespace",
      description:
        "This month first, then each earlier month with any usage, back `months` months. `tokens` and " +
        "`cost_usd` are what the monthly budget counted (LLM calls as they were made on a tenant with a " +
        "monthly budget, or as their run ended; a document's ingest too). `namespaces` holds the runs that " +
        "ended in the month, with their steps, LLM calls, tokens and cost: a run still going counts when it ends.",
      security: bearer,
      request: { query: UsageQuery },
      responses: {
        200: {
          description: "The months",
          content: {
            "application/json": {
              schema: UsageReport,
              example: {
                tenant: "acme",
                months: [
                  {
                    month: "2026-03",
                    tokens: 1840,
                    cost_usd: 0.0042,
                    runs: {
                      runs: 3,
                      steps: 12,
                      llm_calls: 4,
                      input_tokens: 1500,
                      output_tokens: 340,
                      cost_usd: 0.0042,
                    },
                    namespaces: [
                      {
                        namespace: "default",
                        runs: 3,
                        steps: 12,
                        llm_calls: 4,
                        input_tokens: 1500,
                        output_tokens: 340,
                        cost_usd: 0.0042,
                      },
                    ],
                  },
                ],
              },
            },
          },
        },
        ...commonErrors,
      },
    }),
    async (c) => {
      const { months } = c.req.valid("query");
      return c.json(await c.get("deps").quotas.history(c.get("tenantId"), months), 200);
    },
  );
}
