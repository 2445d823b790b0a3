/**
 * The routes `templates.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const TEMPLATES_ROUTES = declareRoutes("templates", {
  savePlanAsTemplate: "POST /v1/tasks/{task_id}/commits/{commit_id}/save-plan",
  listTemplates: "GET /v1/templates",
  getTemplate: "GET /v1/templates/{template_id}",
  deleteTemplate: "DELETE /v1/templates/{template_id}",
});
