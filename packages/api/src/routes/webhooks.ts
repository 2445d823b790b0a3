/**
 * `GET /v1/webhook-secret`: the tenant's signing secret of outgoing webhooks
 * (made on first use), and the operator's quotas of a tenant under `/v1/admin`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { QuotaOverrides, TenantQuotas } from "@stackvm/core";
import type { ApiApp } from "../env";
import { bearer, commonErrors, forbiddenError, json } from "../schemas";
import type { WEBHOOKS_ROUTES } from "./webhooks.paths";

const Secret = z.object({ secret: z.string() }).openapi("WebhookSecret");

const Quotas = z
  .object({
    tenant: z.string(),
    quotas: TenantQuotas(),
    overrides: QuotaOverrides(),
    usage: z.object({
      month: z.string(),
      tokens: z.number(),
      cost_usd: z.number(),
      file_bytes: z.number().openapi({ description: "Bytes the tenant's uploaded files hold now" }),
    }),
  })
  .openapi("TenantQuotas");

const TenantParam = z.object({
  tenant: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, "a tenant id is 1 to 40 of a-z, 0-9 and -")
    .openapi({ param: { name: "tenant", in: "path" }, example: "acme" }),
});

export function registerWebhookRoutes(app: ApiApp, routes: typeof WEBHOOKS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.getWebhookSecret,
      summary: "The secret that signs this tenant's outgoing webhooks",
      description:
        "Outgoing webhooks carry the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and " +
        "`webhook-signature`, signed with this secret. Every attempt of one delivery has the same `webhook-id`.",
      security: bearer,
      responses: {
        200: {
          description: "The secret",
          content: {
            "application/json": {
              schema: Secret,
              example: { secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD" },
            },
          },
        },
        ...commonErrors,
      },
    }),
    async (c) => c.json({ secret: await c.get("deps").webhooks.secret(c.get("tenantId")) }, 200),
  );

  app.openapi(
    createRoute({
      ...routes.getTenantQuotas,
      summary: "A tenant's quotas and this month's usage (operator only)",
      security: bearer,
      request: { params: TenantParam },
      responses: { 200: json(Quotas, "Quotas"), ...commonErrors, ...forbiddenError },
    }),
    async (c) => {
      const { tenant } = c.req.valid("param");
      return c.json(await c.get("deps").quotas.report(tenant), 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.putTenantQuotas,
      summary: "Override a tenant's quotas (operator only)",
      description:
        "The body replaces the tenant's overrides; a field left out takes the configured default. " +
        "Other API instances see the change within 10 seconds.",
      security: bearer,
      request: {
        params: TenantParam,
        body: {
          required: true,
          content: {
            "application/json": {
              schema: QuotaOverrides(),
              example: {
                requests_per_second: 20,
                max_running_tasks: 5,
                monthly_cost_budget_usd: 50,
              },
            },
          },
        },
      },
      responses: { 200: json(Quotas, "Quotas"), ...commonErrors, ...forbiddenError },
    }),
    async (c) => {
      const { tenant } = c.req.valid("param");
      const quotas = c.get("deps").quotas;
      const overrides = c.req.valid("json");
      await quotas.setOverrides(tenant, overrides);
      // What was just written: the report needs no read of it.
      return c.json(await quotas.report(tenant, overrides), 200);
    },
  );
}
