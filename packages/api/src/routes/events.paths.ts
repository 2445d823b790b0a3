/**
 * The routes `events.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const EVENTS_ROUTES = declareRoutes("events", {
  createStreamToken: "POST /v1/tasks/{task_id}/stream-token",
  streamTaskEvents: "GET /v1/tasks/{task_id}/events",
});
