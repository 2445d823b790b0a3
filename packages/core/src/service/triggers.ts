/**
 * Triggers: incoming webhooks that start tasks. A trigger holds a goal (which may
 * read the delivered JSON as `${payload.some.field}`) or a plan (which gets the
 * payload as its input variable `payload`), and a Standard Webhooks secret.
 *
 * `POST /v1/hooks/{trigger_id}` carries no API key, so the trigger is found
 * through a global pointer item `HOOK#{trigger_id}` that names its tenant (as
 * `KEYHASH#` does for keys); everything else lives under the tenant.
 *
 * Each `webhook-id` starts one task: the delivery is recorded
 * (`HOOKDELIVERY#{trigger}#{webhook-id}`, with a TTL, also checked on read) and
 * the task id is derived from (trigger, webhook-id), so a crash between recording
 * and starting is finished by the sender's retry, and two starts of the same
 * delivery write one task.
 */
import * as z from "zod";
import { isErrorKind, MalformedError, NotFoundError, ValidationError } from "../errors";
import { digest, randomId } from "../ids";
import { findReferences, lookupVariables, resolveReferences } from "../plan/references";
import type { Clock } from "../ports/clock";
import { Budget, ResponseFormat } from "../record-fields";
import type { TriggerStore } from "../store/trigger-store";
import { newWebhookSecret, verifyWebhook, type WebhookHeaders } from "../webhooks/signature";
import { DisplayName } from "./display-text";
import { NamespaceName } from "./namespace-name";
import type { NamespaceService } from "./namespaces";
import type { PlanChecks } from "./plan-checks";
import type { CreateTaskInput } from "./task-input";
import type { TaskStarter } from "./task-starter";

export const CreateTriggerInput = z
  .object({
    name: DisplayName(100),
    goal: z.string().min(1).max(10_000).optional(),
    plan: z.array(z.unknown()).optional(),
    namespace: NamespaceName.default("default"),
    response_format: ResponseFormat.optional(),
    budget: Budget.optional(),
    webhook_url: z.string().url().max(2048).optional(),
  })
  .strict()
  .refine((t) => t.goal !== undefined || t.plan !== undefined, {
    message: "give a goal, a plan, or both",
    path: ["goal"],
  });
export type CreateTriggerInput = z.infer<typeof CreateTriggerInput>;

/** A trigger as clients see it (never its secret after creation). */
export const Trigger = z.object({
  trigger_id: z.string(),
  name: z.string(),
  goal: z.string().nullable(),
  plan: z.array(z.unknown()).nullable(),
  namespace: z.string(),
  response_format: ResponseFormat.nullable(),
  webhook_url: z.string().nullable(),
  created_at: z.string(),
});
export type Trigger = z.infer<typeof Trigger>;

/** How long a delivery's `webhook-id` is remembered (senders retry for days). */
export const DELIVERY_TTL_SECONDS = 7 * 24 * 3600;

export interface TriggerServiceDeps {
  triggers: TriggerStore;
  clock: Clock;
  /** Starts a delivery's task. */
  tasks: Pick<TaskStarter, "create">;
  checks: PlanChecks;
  namespaces: NamespaceService;
  /** Counts a verified delivery against the tenant's request rate (`QuotaService.takeRequest`). */
  rateLimit?: (tenant: string) => Promise<void>;
  /** Counts a delivery whose signature failed, apart (`QuotaService.takeBadSignature`). */
  badSignatureLimit?: (tenant: string) => Promise<void>;
}

export class TriggerService {
  constructor(private readonly deps: TriggerServiceDeps) {}

  /** Creates a trigger; its `secret` is answered only here. */
  async create(
    tenant: string,
    input: CreateTriggerInput,
  ): Promise<{ trigger: Trigger; secret: string }> {
    if (input.goal !== undefined) checkGoalReferences(input.goal);
    // What every delivery would fail on is refused now, and nothing is stored.
    if (input.plan === undefined) {
      this.deps.checks.requireLlm(
        "a trigger with a goal needs one to plan each delivery",
        "give the trigger a plan instead of a goal",
      );
    }
    if (input.webhook_url !== undefined) await this.deps.checks.checkWebhookUrl(input.webhook_url);
    const namespace = await this.deps.namespaces.resolve(tenant, input.namespace);
    if (input.plan !== undefined)
      await this.deps.checks.validateIn(namespace, input.plan, ["payload"]);
    const trigger: Trigger = {
      trigger_id: `trg_${randomId(20)}`,
      name: input.name,
      goal: input.goal ?? null,
      plan: input.plan ?? null,
      namespace: input.namespace,
      response_format: input.response_format ?? null,
      webhook_url: input.webhook_url ?? null,
      created_at: new Date(this.deps.clock.now()).toISOString(),
    };
    const secret = newWebhookSecret();
    await this.deps.triggers.create(tenant, trigger.trigger_id, {
      ...trigger,
      ...(input.budget ? { budget: input.budget } : {}),
      tenant_id: tenant,
      secret,
    });
    return { trigger, secret };
  }

  async get(tenant: string, triggerId: string): Promise<Trigger> {
    const item = await this.deps.triggers.get(tenant, triggerId);
    if (!item) throw new NotFoundError("trigger", triggerId);
    return Trigger.parse(item);
  }

  async list(tenant: string): Promise<Trigger[]> {
    return (await this.deps.triggers.list(tenant)).map((item) => Trigger.parse(item));
  }

  async delete(tenant: string, triggerId: string): Promise<void> {
    await this.get(tenant, triggerId);
    await this.deps.triggers.delete(tenant, triggerId);
  }

  /**
   * Verifies a delivery and starts its task, once per `webhook-id`. Answers the
   * task id, and `replayed` when this `webhook-id` was delivered before.
   */
  async deliver(
    triggerId: string,
    headers: Partial<Record<keyof WebhookHeaders, string | undefined>>,
    body: Uint8Array,
  ): Promise<{ task_id: string; replayed: boolean }> {
    const tenant = await this.deps.triggers.tenantOf(triggerId);
    const item = tenant ? await this.deps.triggers.get(tenant, triggerId) : null;
    if (!tenant || !item) throw new NotFoundError("trigger", triggerId);
    const nowMs = this.deps.clock.now();
    // The signature first: anyone who knows the URL can send deliveries, and only
    // the ones the tenant's sender signed may spend the tenant's request rate.
    let webhookId: string;
    try {
      webhookId = verifyWebhook(item.secret as string, headers, body, Math.floor(nowMs / 1000));
    } catch (error) {
      if (isErrorKind(error, "unauthorized")) await this.deps.badSignatureLimit?.(tenant);
      throw error;
    }
    await this.deps.rateLimit?.(tenant);
    const payload = parsePayload(body);

    const taskId = `tsk_${digest("hook", triggerId, webhookId).slice(0, 20)}`;
    const nowSeconds = Math.floor(nowMs / 1000);
    const claim = await this.deps.triggers.claimDelivery(
      tenant,
      triggerId,
      webhookId,
      taskId,
      nowSeconds,
      DELIVERY_TTL_SECONDS,
    );
    // Started before (the task may since have been deleted): start nothing. The
    // marker holds the same task id, derived from the delivery.
    if (claim === "started") return { task_id: taskId, replayed: true };
    // "unfinished": the first delivery stopped before its task was written: finish it.
    const seen = claim === "unfinished";
    const trigger = Trigger.parse(item);
    const input = await taskInput(trigger, item.budget, payload, webhookId);
    await this.deps.tasks.create(tenant, input, taskId);
    await this.deps.triggers.markDeliveryStarted(tenant, triggerId, webhookId);
    return { task_id: taskId, replayed: seen };
  }
}

/** A trigger's goal may only read the delivery: `${payload}` or `${payload.path}`. */
function checkGoalReferences(goal: string): void {
  const others = findReferences(goal).filter((r) => r.name !== "payload");
  if (others.length > 0) {
    throw new ValidationError(
      "invalid_trigger_goal",
      `a trigger's goal can only reference the delivered JSON as \${payload} or \${payload.field}; found ${others
        .map((r) => r.text)
        .join(", ")} (write \\\${ for a literal \${)`,
    );
  }
}

function parsePayload(body: Uint8Array): unknown {
  const text = Buffer.from(body).toString("utf8");
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedError("the delivery body must be JSON (Content-Type: application/json)");
  }
}

/**
 * The task a delivery starts: the goal with the payload's fields in it, the payload as input.
 * The start's schema loads with the first delivery (the API's start does not build it).
 */
async function taskInput(
  trigger: Trigger,
  budget: unknown,
  payload: unknown,
  webhookId: string,
): Promise<CreateTaskInput> {
  const { CreateTaskInput } = await import("./task-input");
  let goal: string | undefined;
  if (trigger.goal !== null) {
    try {
      const resolved = resolveReferences(trigger.goal, lookupVariables({ payload }));
      goal = typeof resolved === "string" ? resolved : JSON.stringify(resolved);
    } catch (error) {
      throw new ValidationError(
        "payload_missing_field",
        `the trigger's goal reads a field the delivered JSON does not have: ${(error as Error).message}`,
      );
    }
  }
  const parsed = CreateTaskInput.safeParse({
    // A plan's task takes the trigger's name, its title in lists; a goal's is its goal.
    ...(goal === undefined ? { name: trigger.name } : { goal }),
    ...(trigger.plan === null ? {} : { plan: trigger.plan }),
    namespace: trigger.namespace,
    ...(trigger.response_format ? { response_format: trigger.response_format } : {}),
    ...(trigger.webhook_url ? { webhook_url: trigger.webhook_url } : {}),
    ...(budget ? { budget } : {}),
    inputs: { payload },
    metadata: { trigger_id: trigger.trigger_id, webhook_id: webhookId },
  });
  if (!parsed.success) {
    throw new ValidationError(
      "invalid_delivery",
      `the task this delivery would start is not valid: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  }
  return parsed.data;
}
