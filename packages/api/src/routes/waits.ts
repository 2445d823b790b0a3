/**
 * Waiting branches: answer an `ask_human` question with the API key
 * (`POST /v1/tasks/{task_id}/branches/{name}/input`) or with the single-use
 * resume URL of a `task.waiting` webhook (`POST /v1/resume/{token}`, no key).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { Branch } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import {
  BranchParams,
  bearer,
  commonErrors,
  conflictError,
  invalidError,
  json,
  jsonBody,
} from "../schemas";
import type { WAITS_ROUTES } from "./waits.paths";

/** The answer's value; a body without it is refused with how to send it. */
const AnswerValue = z.unknown().openapi({
  description: "The answer: any JSON value that matches the question's `schema`",
  example: true,
});

const withAnswer = <T extends { answer?: unknown }>(schema: z.ZodType<T>) =>
  schema.refine((body) => Object.hasOwn(body, "answer"), {
    message: 'send the answer as {"answer": <value>}',
    path: ["answer"],
  });

const Answer = withAnswer(z.object({ answer: AnswerValue }).strict()).openapi("Answer");

const AnswerWithSource = withAnswer(
  z
    .object({
      answer: AnswerValue,
      /** Where the answer was given; the commit records it (`details.answered_by`). */
      source: z.enum(["api", "console", "cli"]).default("api"),
    })
    .strict(),
).openapi("BranchInput");

const TokenParam = z.object({
  token: z
    .string()
    .min(1)
    .max(1024)
    .openapi({ param: { name: "token", in: "path" } }),
});

const Resumed = z
  .object({ task_id: z.string(), branch: z.string(), status: z.string() })
  .openapi("Resumed");

export function registerWaitRoutes(app: ApiApp, routes: typeof WAITS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.answerWait,
      summary: "Answer the question a waiting branch asks (ask_human)",
      description:
        "The answer must match the question's JSON Schema (`waiting.schema` on the branch); " +
        "it becomes the `ask_human` step's output variable and the branch runs on. " +
        "409 when the branch does not wait for an answer (or it timed out); 422, with the branch still waiting, when the answer does not match.",
      security: bearer,
      request: { params: BranchParams, ...jsonBody(AnswerWithSource) },
      responses: {
        200: json(Branch, "Answered: the branch runs on (or is queued for a running slot)"),
        ...commonErrors,
        ...conflictError,
        ...invalidError,
      },
    }),
    async (c) => {
      const { task_id, name } = c.req.valid("param");
      const { answer, source } = c.req.valid("json");
      const branch = await c
        .get("deps")
        .waits.answer(c.get("tenantId"), task_id, name, answer, source);
      return c.json(branch, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.answerWaitByToken,
      summary: "Answer a question with the resume URL of its task.waiting webhook (no API key)",
      description:
        "The token is single-use, signed and expires with the question (30 days without a timeout). " +
        "404 for an unknown, forged, used or expired token; 422 when the answer does not match the question's schema (the token stays usable); " +
        "429 `source_rate_limited` past `STACKVM_ANONYMOUS_RPS` requests a second from one address. Nothing is written before the token's MAC is verified.",
      request: { params: TokenParam, ...jsonBody(Answer) },
      responses: {
        200: json(Resumed, "Answered"),
        400: commonErrors[400],
        404: commonErrors[404],
        ...invalidError,
        429: commonErrors[429],
        500: commonErrors[500],
      },
    }),
    async (c) => {
      const { token } = c.req.valid("param");
      const { answer } = c.req.valid("json");
      return c.json(await c.get("deps").waits.resume(token, answer), 200);
    },
  );
}
