/**
 * `/v1/schedules`: a goal or plan started by a 5-field cron in an IANA time zone.
 * Each due run starts one task with `metadata.schedule_id` and `metadata.due_at`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { CreateScheduleInput, Schedule, UpdateScheduleInput } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import { bearer, commonErrors, invalidError, json } from "../schemas";
import type { SCHEDULES_ROUTES } from "./schedules.paths";

const ScheduleView = z.object(Schedule.shape).openapi("Schedule");

const ScheduleParam = z.object({
  schedule_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "schedule_id", in: "path" }, example: "sch_a1b2c3d4e5f6g7h8" }),
});

const exampleSchedule = {
  schedule_id: "sch_a1b2c3d4e5f6g7h8",
  name: "morning digest",
  cron: "0 9 * * 1-5",
  timezone: "Europe/Berlin",
  goal: "Summarize yesterday's orders in five bullet points",
  plan: null,
  namespace: "default",
  enabled: true,
  next_run_at: "2026-03-30T07:00:00.000Z",
  last_run_at: null,
  created_at: "2026-03-27T10:00:00.000Z",
  updated_at: "2026-03-27T10:00:00.000Z",
};

export function registerScheduleRoutes(app: ApiApp, routes: typeof SCHEDULES_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createSchedule,
      summary: "Create a schedule",
      description:
        "`cron` has 5 fields (minute hour day-of-month month day-of-week) and is read in `timezone` " +
        "(IANA, default UTC), daylight-saving changes included. Restrict day-of-month or day-of-week, not both.",
      security: bearer,
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: CreateScheduleInput,
              example: {
                name: "morning digest",
                cron: "0 9 * * 1-5",
                timezone: "Europe/Berlin",
                goal: "Summarize yesterday's orders in five bullet points",
              },
            },
          },
        },
      },
      responses: {
        201: {
          description: "Created",
          content: { "application/json": { schema: ScheduleView, example: exampleSchedule } },
        },
        ...commonErrors,
        ...invalidError,
      },
    }),
    async (c) =>
      c.json(await c.get("deps").schedules.create(c.get("tenantId"), c.req.valid("json")), 201),
  );

  app.openapi(
    createRoute({
      ...routes.listSchedules,
      summary: "List schedules",
      security: bearer,
      responses: {
        200: json(z.object({ schedules: z.array(ScheduleView) }), "Schedules"),
        ...commonErrors,
      },
    }),
    async (c) => c.json({ schedules: await c.get("deps").schedules.list(c.get("tenantId")) }, 200),
  );

  app.openapi(
    createRoute({
      ...routes.getSchedule,
      summary: "Read a schedule",
      security: bearer,
      request: { params: ScheduleParam },
      responses: { 200: json(ScheduleView, "The schedule"), ...commonErrors },
    }),
    async (c) =>
      c.json(
        await c.get("deps").schedules.get(c.get("tenantId"), c.req.valid("param").schedule_id),
        200,
      ),
  );

  app.openapi(
    createRoute({
      ...routes.updateSchedule,
      summary: "Update a schedule (enabled, cron, timezone, goal or plan, ...)",
      security: bearer,
      request: {
        params: ScheduleParam,
        body: {
          required: true,
          content: {
            "application/json": { schema: UpdateScheduleInput, example: { enabled: false } },
          },
        },
      },
      responses: {
        200: json(ScheduleView, "The updated schedule"),
        ...commonErrors,
        ...invalidError,
      },
    }),
    async (c) =>
      c.json(
        await c
          .get("deps")
          .schedules.update(
            c.get("tenantId"),
            c.req.valid("param").schedule_id,
            c.req.valid("json"),
          ),
        200,
      ),
  );

  app.openapi(
    createRoute({
      ...routes.deleteSchedule,
      summary: "Delete a schedule; no run starts after this",
      security: bearer,
      request: { params: ScheduleParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      await c.get("deps").schedules.delete(c.get("tenantId"), c.req.valid("param").schedule_id);
      return c.body(null, 204);
    },
  );
}
