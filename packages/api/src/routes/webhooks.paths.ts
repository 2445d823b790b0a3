/**
 * The routes `webhooks.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const WEBHOOKS_ROUTES = declareRoutes("webhooks", {
  getWebhookSecret: "GET /v1/webhook-secret",
  getTenantQuotas: "GET /v1/admin/tenants/{tenant}/quotas",
  putTenantQuotas: "PUT /v1/admin/tenants/{tenant}/quotas",
});
