/**
 * The routes `keys.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const KEYS_ROUTES = declareRoutes("keys", {
  createKey: "POST /v1/keys",
  listKeys: "GET /v1/keys",
  deleteKey: "DELETE /v1/keys/{key_id}",
  createTenantKey: "POST /v1/admin/tenants/{tenant}/keys",
});
