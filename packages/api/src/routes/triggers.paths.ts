/**
 * The routes `triggers.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const TRIGGERS_ROUTES = declareRoutes("triggers", {
  createTrigger: "POST /v1/triggers",
  listTriggers: "GET /v1/triggers",
  getTrigger: "GET /v1/triggers/{trigger_id}",
  deleteTrigger: "DELETE /v1/triggers/{trigger_id}",
  deliverTrigger: "POST /v1/hooks/{trigger_id}",
});
