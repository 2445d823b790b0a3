/**
 * Templates: `save-plan` on a commit, and `/v1/templates` to list, read and delete
 * them (the console's "best plans" page). A saved plan is reused with no LLM call
 * for a goal whose normalized text is the same, and shown to the planner as an
 * example for a similar one.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { Template } from "@stackvm/core";
import type { ApiApp } from "../env";
import { bearer, CommitParams, commonErrors, invalidError, json, Paging } from "../schemas";
import type { TEMPLATES_ROUTES } from "./templates.paths";

const TemplateParams = z.object({
  template_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "template_id", in: "path" } }),
});

const TemplateList = z.object({
  templates: z.array(Template()),
  next_cursor: z.string().nullable(),
});

export function registerTemplateRoutes(app: ApiApp, routes: typeof TEMPLATES_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.savePlanAsTemplate,
      summary: "Save the plan at this commit as a reusable template",
      description:
        "Saved with the task's goal in the task's namespace. A later task whose goal is the same " +
        "(ignoring case, extra spaces and trailing punctuation) runs this plan with no planner call; " +
        "a similar goal gets it as an example. Saving again for the same goal replaces the template.",
      security: bearer,
      request: { params: CommitParams },
      responses: {
        201: json(z.object({ template_id: z.string() }), "Saved"),
        ...commonErrors,
        ...invalidError,
      },
    }),
    async (c) => {
      const { task_id, commit_id } = c.req.valid("param");
      const saved = await c.get("deps").templates.save(c.get("tenantId"), task_id, commit_id);
      return c.json(saved, 201);
    },
  );

  app.openapi(
    createRoute({
      ...routes.listTemplates,
      summary: "List saved templates",
      security: bearer,
      request: { query: Paging.extend({ namespace: z.string().min(1).max(64).optional() }) },
      responses: { 200: json(TemplateList, "A page of templates"), ...commonErrors },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const page = await c.get("deps").templates.list(c.get("tenantId"), {
        limit: q.limit,
        cursor: q.cursor ?? null,
        ...(q.namespace ? { namespace: q.namespace } : {}),
      });
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.getTemplate,
      summary: "Read a template",
      security: bearer,
      request: { params: TemplateParams },
      responses: { 200: json(Template(), "The template"), ...commonErrors },
    }),
    async (c) => {
      const { template_id } = c.req.valid("param");
      return c.json(await c.get("deps").templates.get(c.get("tenantId"), template_id), 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteTemplate,
      summary: "Delete a template",
      security: bearer,
      request: { params: TemplateParams },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      const { template_id } = c.req.valid("param");
      await c.get("deps").templates.delete(c.get("tenantId"), template_id);
      return c.body(null, 204);
    },
  );
}
