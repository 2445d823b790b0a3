/**
 * `GET /v1/tasks/{task_id}/commits/{commit_id}/llm-calls/{n}`: the whole prompt
 * and answer of one LLM call of a commit (its trace), redacted of secrets.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { LlmCallTrace } from "@stackvm/core";
import type { ApiApp } from "../env";
import { bearer, CommitParams, commonErrors, json } from "../schemas";
import type { LLM_CALLS_ROUTES } from "./llm-calls.paths";

const LlmCallParams = CommitParams.extend({
  n: z
    .string()
    .regex(/^\d{1,4}$/, "n is the call's place in the commit's llm_calls, from 0, e.g. 0")
    .openapi({ param: { name: "n", in: "path" }, example: "0" }),
});

export function registerLlmCallRoutes(app: ApiApp, routes: typeof LLM_CALLS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.getLlmCall,
      summary: "Read one LLM call of a commit: its messages, parameters and answer",
      description:
        "`n` counts the commit's `llm_calls` from 0. The trace holds the request as sent " +
        "(messages, `response_format`, model, temperature, max tokens) and the answer " +
        "(text, parsed JSON, finish reason), the repair round, why an answer was sent " +
        "back, and each attempt against the server. Secrets (bearer tokens, API keys, " +
        "the deployment's keys) are redacted before a trace is stored. Traces are kept " +
        "`STACKVM_LLM_TRACE_RETENTION_DAYS` days; 404 when the task, the commit or the " +
        "call does not exist, or its trace was not kept or has expired.",
      security: bearer,
      request: { params: LlmCallParams },
      responses: { 200: json(LlmCallTrace, "The call's trace"), ...commonErrors },
    }),
    async (c) => {
      const { task_id, commit_id, n } = c.req.valid("param");
      const deps = c.get("deps");
      return c.json(
        await deps.llmTraces.read(c.get("tenantId"), task_id, commit_id, Number(n)),
        200,
      );
    },
  );
}
