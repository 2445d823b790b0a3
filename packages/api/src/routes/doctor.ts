/**
 * `GET /v1/doctor`: the server checks what a task needs and says what to fix:
 * the API and the key (answering at all proves both), each configured LLM
 * model, the embeddings, the sandbox. Where this process holds no LLM, embeddings
 * or sandbox (the API function on AWS: only the worker does), those checks are
 * `unchecked` with the way to check them.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { DoctorCheck } from "../deps";
import type { ApiApp } from "../env";
import { bearer, commonErrors, json } from "../schemas";
import type { DOCTOR_ROUTES } from "./doctor.paths";

const Check = z
  .object({
    name: z.string().openapi({ example: "llm gpt-4o-mini" }),
    status: z.enum(["ok", "warning", "failed", "unchecked"]),
    detail: z.string(),
    fix: z.string().nullable().openapi({ description: "What to do; null when the check passed" }),
  })
  .openapi("DoctorCheck");

const DoctorAnswer = z.object({
  ok: z.boolean().openapi({ description: "False when any check failed" }),
  checks: z.array(Check),
  checked_at: z.string().openapi({
    description: "When the server's checks (LLM, embeddings, sandbox) ran",
    example: "2026-03-01T09:00:00.000Z",
  }),
  cached: z.boolean().openapi({
    description:
      "True when the checks are an earlier run's, given again (the server runs them at most once a minute)",
  }),
  age_seconds: z.number().int().openapi({
    description: "How old the checks are: 0 for a run made for this request",
    example: 0,
  }),
});

/** Where this process cannot check the LLM, embeddings and sandbox itself. */
const UNCHECKED: DoctorCheck[] = ["llm", "embeddings", "sandbox"].map((name) => ({
  name,
  status: "unchecked",
  detail: "this API process holds no LLM, embeddings or sandbox: the worker function does",
  fix: 'run a small task to try them: stackvm run --goal "Say hello"',
}));

export function registerDoctorRoutes(app: ApiApp, routes: typeof DOCTOR_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.runDoctor,
      summary: "Check the API, the key, the LLM, the embeddings and the sandbox",
      description:
        "Each check answers `ok`, `warning` (works without it: embeddings serve only knowledge bases), " +
        "`failed` or `unchecked`, with what to fix. The LLM check sends one short completion to each " +
        "configured model, which the LLM server may bill; so the server runs the checks at most once a " +
        "minute, and every request within that minute (any tenant's) gets the same answer, with `cached: true`, " +
        "`checked_at` and `age_seconds` saying how old it is.",
      security: bearer,
      responses: { 200: json(DoctorAnswer, "The checks"), ...commonErrors },
    }),
    async (c) => {
      const deps = c.get("deps");
      const api: DoctorCheck = {
        name: "api",
        status: "ok",
        detail: `the API answered and took the key of tenant ${c.get("tenantId")}`,
        fix: null,
      };
      const run = deps.doctor
        ? await deps.doctor()
        : { checks: UNCHECKED, checkedAt: Date.now(), ageMs: 0, cached: false };
      const checks = [api, ...run.checks];
      return c.json(
        {
          ok: checks.every((check) => check.status !== "failed"),
          checks,
          checked_at: new Date(run.checkedAt).toISOString(),
          cached: run.cached,
          age_seconds: Math.floor(run.ageMs / 1000),
        },
        200,
      );
    },
  );
}
