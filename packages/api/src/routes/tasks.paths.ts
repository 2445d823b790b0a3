/**
 * The routes `tasks.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const TASKS_ROUTES = declareRoutes("tasks", {
  createTask: "POST /v1/tasks",
  listTasks: "GET /v1/tasks",
  getTask: "GET /v1/tasks/{task_id}",
  cancelTask: "POST /v1/tasks/{task_id}/cancel",
  deleteTask: "DELETE /v1/tasks/{task_id}",
});
