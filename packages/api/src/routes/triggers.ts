/**
 * `/v1/triggers` (incoming webhooks that start tasks) and `POST /v1/hooks/{id}`,
 * the one `/v1` route without an API key: it is verified by its Standard Webhooks
 * signature instead, over the raw body exactly as it arrived.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { CreateTriggerInput, Trigger } from "@stackvm/core";
import type { Context } from "hono";
import type { ApiApp, ApiEnv } from "../env";
import { errorBody } from "../errors";
import { bearer, commonErrors, ErrorBody, invalidError, json } from "../schemas";
import type { TRIGGERS_ROUTES } from "./triggers.paths";

/** A delivery's body is the task input `payload`: small, as webhook payloads are. */
export const HOOK_BODY_LIMIT = 256 * 1024;

const TriggerParam = z.object({
  trigger_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "trigger_id", in: "path" }, example: "trg_3k9x0c1m2n4b5v6c7x8z" }),
});

const TriggerView = z.object({ ...Trigger.shape, url: z.string() }).openapi("Trigger");
const NewTrigger = z
  .object({ trigger_id: z.string(), url: z.string(), secret: z.string() })
  .openapi("NewTrigger");
const Started = z.object({ task_id: z.string() }).openapi("HookTask");

const exampleTrigger = {
  name: "new order",
  goal: "Write a thank-you note to ${payload.customer.name} for order ${payload.order_id}",
  namespace: "default",
};

/** The public URL of a trigger: STACKVM_PUBLIC_URL, or this request's origin. */
function hookUrl(c: Context<ApiEnv>, triggerId: string): string {
  const base = c.get("deps").config.publicUrl ?? new URL(c.req.url).origin;
  return `${base.replace(/\/$/, "")}/v1/hooks/${triggerId}`;
}

export function registerTriggerRoutes(app: ApiApp, routes: typeof TRIGGERS_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.createTrigger,
      summary: "Create a trigger (an incoming webhook that starts a task)",
      description:
        "The goal may read the delivered JSON as `${payload.field}`; a plan gets it as the input variable `payload`. " +
        "`secret` (Standard Webhooks, `whsec_...`) is shown only in this answer: the sender signs each delivery with it.",
      security: bearer,
      request: {
        body: {
          required: true,
          content: { "application/json": { schema: CreateTriggerInput, example: exampleTrigger } },
        },
      },
      responses: {
        201: {
          description: "Created",
          content: {
            "application/json": {
              schema: NewTrigger,
              example: {
                trigger_id: "trg_3k9x0c1m2n4b5v6c7x8z",
                url: "https://api.example.com/v1/hooks/trg_3k9x0c1m2n4b5v6c7x8z",
                secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
              },
            },
          },
        },
        ...commonErrors,
        ...invalidError,
      },
    }),
    async (c) => {
      const { trigger, secret } = await c
        .get("deps")
        .triggers.create(c.get("tenantId"), c.req.valid("json"));
      return c.json(
        { trigger_id: trigger.trigger_id, url: hookUrl(c, trigger.trigger_id), secret },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.listTriggers,
      summary: "List triggers",
      security: bearer,
      responses: {
        200: json(z.object({ triggers: z.array(TriggerView) }), "Triggers"),
        ...commonErrors,
      },
    }),
    async (c) => {
      const triggers = await c.get("deps").triggers.list(c.get("tenantId"));
      return c.json(
        { triggers: triggers.map((t) => ({ ...t, url: hookUrl(c, t.trigger_id) })) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.getTrigger,
      summary: "Read a trigger (without its secret)",
      security: bearer,
      request: { params: TriggerParam },
      responses: { 200: json(TriggerView, "The trigger"), ...commonErrors },
    }),
    async (c) => {
      const { trigger_id } = c.req.valid("param");
      const trigger = await c.get("deps").triggers.get(c.get("tenantId"), trigger_id);
      return c.json({ ...trigger, url: hookUrl(c, trigger_id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteTrigger,
      summary: "Delete a trigger; its URL answers 404 from then on",
      security: bearer,
      request: { params: TriggerParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors },
    }),
    async (c) => {
      await c.get("deps").triggers.delete(c.get("tenantId"), c.req.valid("param").trigger_id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deliverTrigger,
      summary: "Deliver to a trigger (no API key: Standard Webhooks signature)",
      description:
        "Headers `webhook-id`, `webhook-timestamp` (unix seconds, within 5 minutes of now) and " +
        "`webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{raw body}` under the trigger's secret; " +
        "several space-separated signatures are accepted). A `webhook-id` delivered before answers 200 with the first task and starts nothing. " +
        "Only signed deliveries count against the tenant's requests per second; ones whose signature fails are counted apart and answer 429 (`bad_signatures_rate_limited`) past as many per second. " +
        `Bodies over ${HOOK_BODY_LIMIT / 1024} KiB answer 413.`,
      middleware: [
        // Read the raw bytes before the JSON validator: the signature is over them,
        // and Hono then parses the JSON from this same buffer. The app's own body
        // limit bounded the read; the smaller limit of a delivery is checked on the
        // bytes (a second stream limit here found the stream read already and threw,
        // a 500, for a body sent without Content-Length).
        async (c, next) => {
          const bytes = await c.req.arrayBuffer();
          if (bytes.byteLength > HOOK_BODY_LIMIT) {
            return c.json(
              errorBody(
                "too_large",
                `a delivery body may be at most ${HOOK_BODY_LIMIT} bytes: send a smaller payload, e.g. ids the task can fetch`,
              ),
              413,
            );
          }
          await next();
        },
      ],
      request: {
        params: TriggerParam,
        headers: z.object({
          "webhook-id": z.string().max(256).optional(),
          "webhook-timestamp": z.string().max(32).optional(),
          "webhook-signature": z.string().max(4096).optional(),
        }),
        body: {
          required: true,
          content: {
            "application/json": {
              schema: z.unknown(),
              example: { order_id: "A-1001", customer: { name: "Ada" } },
            },
          },
        },
      },
      responses: {
        202: json(Started, "Verified; the task started"),
        200: json(Started, "This webhook-id was delivered before: its task, nothing started"),
        ...commonErrors,
        413: json(ErrorBody, `Body over ${HOOK_BODY_LIMIT / 1024} KiB (\`too_large\`)`),
        ...invalidError,
      },
    }),
    async (c) => {
      const headers = c.req.valid("header");
      const body = new Uint8Array(await c.req.arrayBuffer());
      const result = await c
        .get("deps")
        .triggers.deliver(c.req.valid("param").trigger_id, headers, body);
      return c.json({ task_id: result.task_id }, result.replayed ? 200 : 202);
    },
  );
}
