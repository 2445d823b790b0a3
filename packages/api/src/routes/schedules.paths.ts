/**
 * The routes `schedules.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const SCHEDULES_ROUTES = declareRoutes("schedules", {
  createSchedule: "POST /v1/schedules",
  listSchedules: "GET /v1/schedules",
  getSchedule: "GET /v1/schedules/{schedule_id}",
  updateSchedule: "PATCH /v1/schedules/{schedule_id}",
  deleteSchedule: "DELETE /v1/schedules/{schedule_id}",
});
