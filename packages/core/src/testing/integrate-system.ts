/**
 * The in-memory core system with the integrator's services wired as the real
 * system wires them (quotas, running slots, triggers, schedules, outgoing
 * webhooks), for their unit tests. Not exported from the package.
 */

import { LlmConfig } from "../llm/config";
import { createLlmSession } from "../llm/session";
import { LOOPBACK_OPENED } from "../net/outbound-policy";
import type { Resolver } from "../net/resolver";
import { silentLog } from "../ports/log";
import type { SchedulerPort, ScheduleTimer } from "../ports/scheduler";
import { BranchService } from "../service/branches";
import { taskLifecycle } from "../service/lifecycle";
import { monthMeter } from "../service/month-meter";
import { Presenter } from "../service/present";
import {
  DEFAULT_QUOTAS,
  QuotaService,
  quotaBranchEndHook,
  quotaTerminalHook,
  type TenantQuotas,
  taskAdmission,
} from "../service/quotas";
import { RetryService } from "../service/retry";
import { RunningSlots } from "../service/running-slots";
import { ScheduleService } from "../service/schedules";
import { TaskService } from "../service/tasks";
import { TriggerService } from "../service/triggers";
import { WebhookService } from "../service/webhooks";
import { StepMessage, WebhookMessage } from "../vm/message";
import { runStep } from "../vm/step";
import type { StepDeps, TerminalHook } from "../vm/step-deps";
import { FakeLlm, memorySystem } from "./memory-system";

/** A scheduler port that remembers the timers it was given. */
export class FakeScheduler implements SchedulerPort {
  readonly timers = new Map<string, ScheduleTimer>();
  async put(timer: ScheduleTimer) {
    this.timers.set(`${timer.tenant_id}/${timer.schedule_id}`, timer);
  }
  async delete(tenant: string, id: string) {
    this.timers.delete(`${tenant}/${id}`);
  }
}

const LLM_CONFIG = LlmConfig.parse({
  models: { default: "test-model", reason: "test-model", eval: "test-model" },
  timeoutMs: 1000,
  maxAttempts: 2,
  repairRounds: 1,
  prices: {},
});

export interface IntegrateOptions {
  quotas?: Partial<TenantQuotas>;
  /** Runs when a task ended, before the integrator's hooks (tests make it throw to play a crash). */
  beforeHooks?: TerminalHook;
  webhookBackoffSeconds?: number;
  webhookMaxAttempts?: number;
  /** Name resolution of webhook deliveries (none: the system's resolver). */
  resolve?: Resolver;
}

export function integrateSystem(options: IntegrateOptions = {}) {
  const base = memorySystem({ llm: new FakeLlm() });
  const { clock, blobs, queue, store, stores, namespaces } = base;
  const quotas = new QuotaService({
    quotaStore: stores.quotas,
    store,
    clock,
    defaults: { ...DEFAULT_QUOTAS, ...options.quotas },
  });
  const slots = new RunningSlots({
    slots: stores.slots,
    store,
    queue,
    clock,
    log: silentLog,
    limit: async (tenant) => (await quotas.limits(tenant)).max_running_tasks,
    monthSpent: (tenant) => quotas.monthSpent(tenant),
  });
  const presenter = new Presenter(blobs);
  const webhooks = new WebhookService({
    webhookStore: stores.webhooks,
    queue,
    clock,
    presenter,
    log: silentLog,
    // The operator's opt-in, as a developer gives it (tests call servers on loopback).
    outbound: LOOPBACK_OPENED,
    checkUrl: () => undefined,
    maxAttempts: options.webhookMaxAttempts ?? 5,
    backoffBaseSeconds: options.webhookBackoffSeconds ?? 1,
    timeoutMs: 2000,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const tasks = new TaskService({
    store,
    blobs,
    queue,
    clock,
    namespaces,
    presenter,
    tools: base.step.tools,
    checkWebhookUrl: () => undefined,
    admission: taskAdmission(quotas, slots),
    deliveries: (tenant, taskId) => webhooks.deliveries(tenant, taskId),
  });
  // Forks and retries through the same admission (budget and slots) as tasks.
  const { reads, checks, admission } = tasks;
  const branches = new BranchService({
    store,
    blobs,
    queue,
    clock,
    presenter,
    tasks: reads,
    checks,
    admission,
  });
  const retries = new RetryService({
    store,
    queue,
    clock,
    presenter,
    branches,
    tasks: reads,
    checks,
    admission,
  });
  const lifecycle = taskLifecycle(store, clock, {
    onBranchEnd: [quotaBranchEndHook(quotas)],
    afterTerminal: [
      ...(options.beforeHooks ? [options.beforeHooks] : []),
      webhooks.terminalHook(),
      quotaTerminalHook(slots),
    ],
  });
  const step: StepDeps = {
    ...base.step,
    meter: (tenant, taskId, branch) => monthMeter(quotas, stores.quotas, tenant, taskId, branch),
    llm: (budget) =>
      createLlmSession({
        port: base.llm,
        config: LLM_CONFIG,
        budget,
        now: clock.now,
        sleep: async () => undefined,
      }),
    onStart: lifecycle.onStart,
    onTerminal: lifecycle.onTerminal,
  };
  const scheduler = new FakeScheduler();
  const schedules = new ScheduleService({
    schedules: stores.schedules,
    clock,
    tasks: tasks.starter,
    checks,
    namespaces,
    scheduler,
    log: silentLog,
  });
  const triggers = new TriggerService({
    triggers: stores.triggers,
    clock,
    tasks: tasks.starter,
    checks,
    namespaces,
    rateLimit: (tenant) => quotas.takeRequest(tenant),
    badSignatureLimit: (tenant) => quotas.takeBadSignature(tenant),
  });
  /** Delivers every deliverable message (steps and webhooks) until none is left. */
  const drain = () =>
    queue.drain(async (message) => {
      const body = JSON.parse(message.body);
      if (body.kind === "webhook") {
        const result = await webhooks.deliver(WebhookMessage.parse(body), message.receiveCount);
        if (result.retryAfterSeconds !== undefined) {
          await queue.retryAfter(message.receiptHandle, result.retryAfterSeconds);
          throw new Error("webhook attempt failed");
        }
        return;
      }
      await runStep(step, StepMessage.parse(body));
    });
  return {
    ...base,
    tasks,
    branches,
    retries,
    quotas,
    slots,
    webhooks,
    schedules,
    scheduler,
    triggers,
    step,
    drain,
  };
}
