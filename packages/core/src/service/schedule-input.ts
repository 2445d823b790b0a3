/**
 * The shapes of schedules at the API: the body that creates one, the `PATCH`
 * that changes one, and a schedule as clients see it (`schedules.ts`).
 */
import * as z from "zod";
import { Budget, ResponseFormat } from "../model";
import { VariableName } from "../plan/schema";
import { DisplayName } from "./display-text";
import { NamespaceName } from "./namespace-name";

const Fields = {
  name: DisplayName(100),
  cron: z.string().min(1).max(200).describe("5 fields: minute hour day-of-month month day-of-week"),
  timezone: z.string().min(1).max(64).describe("IANA time zone, e.g. Europe/Berlin"),
  goal: z.string().min(1).max(10_000),
  plan: z.array(z.unknown()),
  namespace: NamespaceName,
  enabled: z.boolean(),
  inputs: z.record(VariableName, z.unknown()),
  response_format: ResponseFormat,
  budget: Budget,
  webhook_url: z.string().url().max(2048),
  metadata: z.record(z.string(), z.unknown()),
};

export const CreateScheduleInput = z
  .object({
    name: Fields.name,
    cron: Fields.cron,
    timezone: Fields.timezone.default("UTC"),
    goal: Fields.goal.optional(),
    plan: Fields.plan.optional(),
    namespace: Fields.namespace.default("default"),
    enabled: Fields.enabled.default(true),
    inputs: Fields.inputs.optional(),
    response_format: Fields.response_format.optional(),
    budget: Fields.budget.optional(),
    webhook_url: Fields.webhook_url.optional(),
    metadata: Fields.metadata.optional(),
  })
  .strict()
  .refine((s) => s.goal !== undefined || s.plan !== undefined, {
    message: "give a goal, a plan, or both",
    path: ["goal"],
  });
export type CreateScheduleInput = z.infer<typeof CreateScheduleInput>;

/** `PATCH`: the fields given replace the schedule's; `goal` or `plan` null removes it. */
export const UpdateScheduleInput = z
  .object({
    name: Fields.name,
    cron: Fields.cron,
    timezone: Fields.timezone,
    goal: Fields.goal.nullable(),
    plan: Fields.plan.nullable(),
    namespace: Fields.namespace,
    enabled: Fields.enabled,
    inputs: Fields.inputs,
    response_format: Fields.response_format,
    budget: Fields.budget,
    webhook_url: Fields.webhook_url.nullable(),
    metadata: Fields.metadata,
  })
  .partial()
  .strict();
export type UpdateScheduleInput = z.infer<typeof UpdateScheduleInput>;

export const Schedule = z.object({
  schedule_id: z.string(),
  name: z.string(),
  cron: z.string(),
  timezone: z.string(),
  goal: z.string().nullable(),
  plan: z.array(z.unknown()).nullable(),
  namespace: z.string(),
  enabled: z.boolean(),
  /** The next due time in UTC; null while disabled. */
  next_run_at: z.string().nullable(),
  last_run_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Schedule = z.infer<typeof Schedule>;
