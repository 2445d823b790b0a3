/**
 * `/v1/keys` (a tenant's own keys) and `/v1/admin/tenants/{tenant}/keys` (operator).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { ApiApp } from "../env";
import { bearer, commonErrors, forbiddenError, json, jsonBody } from "../schemas";
import type { KEYS_ROUTES } from "./keys.paths";

const KeyInfo = z
  .object({ key_id: z.string(), name: z.string(), prefix: z.string(), created_at: z.string() })
  .openapi("ApiKey");
const NewKey = KeyInfo.extend({ key: z.string() }).openapi("NewApiKey");
const KeyInput = z.object({ name: z.string().min(1).max(100) }).strict();

export function registerKeyRoutes(app: ApiApp, routes: typeof KEYS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createKey,
      summary: "Create an API key for the caller's tenant",
      description:
        "`key` is shown only in this answer; the service keeps a hash. `key_id` (what lists show and `DELETE` takes) is random and shows nothing of the key; `prefix` shows the key up to four characters of its secret.",
      security: bearer,
      request: jsonBody(KeyInput),
      responses: { 201: json(NewKey, "The new key"), ...commonErrors },
    }),
    async (c) =>
      c.json(await c.get("deps").keys.create(c.get("tenantId"), c.req.valid("json").name), 201),
  );

  app.openapi(
    createRoute({
      ...routes.listKeys,
      summary: "List the tenant's API keys (never the keys themselves)",
      security: bearer,
      responses: { 200: json(z.object({ keys: z.array(KeyInfo) }), "Keys"), ...commonErrors },
    }),
    async (c) => c.json({ keys: await c.get("deps").keys.list(c.get("tenantId")) }, 200),
  );

  app.openapi(
    createRoute({
      ...routes.deleteKey,
      summary: "Revoke an API key",
      security: bearer,
      request: {
        params: z.object({
          key_id: z
            .string()
            .min(1)
            .max(64)
            .openapi({ param: { name: "key_id", in: "path" } }),
        }),
      },
      responses: { 204: { description: "Revoked" }, ...commonErrors },
    }),
    async (c) => {
      await c.get("deps").keys.revoke(c.get("tenantId"), c.req.valid("param").key_id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      ...routes.createTenantKey,
      summary: "Create an API key for any tenant (operator only)",
      description: "Needs `STACKVM_ADMIN_KEY` as the bearer; creates the tenant if new.",
      security: bearer,
      request: {
        params: z.object({
          tenant: z
            .string()
            .regex(/^[a-z0-9-]{1,40}$/)
            .openapi({ param: { name: "tenant", in: "path" } }),
        }),
        ...jsonBody(KeyInput),
      },
      responses: { 201: json(NewKey, "The new key"), ...commonErrors, ...forbiddenError },
    }),
    async (c) =>
      c.json(
        await c.get("deps").keys.create(c.req.valid("param").tenant, c.req.valid("json").name),
        201,
      ),
  );
}
