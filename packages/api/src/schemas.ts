/**
 * Schemas shared by the routes: the error shape, list paging, path parameters.
 */
import { z } from "@hono/zod-openapi";

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi("Error");

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/** The error answers every authenticated route may give. */
export const commonErrors = {
  400: errorResponse("Malformed request"),
  401: errorResponse("No or bad API key"),
  404: errorResponse("Not found (also for another tenant's ids)"),
  429: errorResponse("Rate limited; see Retry-After"),
  500: errorResponse("Internal error"),
} as const;

export const conflictError = { 409: errorResponse("Conflict") } as const;
export const invalidError = { 422: errorResponse("Valid JSON, invalid content") } as const;
export const forbiddenError = { 403: errorResponse("Forbidden") } as const;

export const Paging = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(2000).optional(),
});

export const TaskIdParam = z.object({
  task_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "task_id", in: "path" } }),
});

/** A branch of a task in the path: `/v1/tasks/{task_id}/branches/{name}`. */
export const BranchParams = TaskIdParam.extend({
  name: z
    .string()
    .regex(/^[a-z0-9_-]{1,64}$/)
    .openapi({ param: { name: "name", in: "path" } }),
});

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { content: { "application/json": { schema } }, required: true },
});

export const bearer = [{ bearerAuth: [] }];

/** A task's reads: the API key, or a stream token of that task (`?token=`). */
export const bearerOrStreamToken: Array<Record<string, string[]>> = [
  { bearerAuth: [] },
  { streamToken: [] },
];

/** `{task_id}/commits/{commit_id}` path parameters. */
export const CommitParams = TaskIdParam.extend({
  commit_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "commit_id", in: "path" } }),
});
